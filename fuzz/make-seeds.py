#!/usr/bin/env python3
"""Writes the checked-in seed corpora fuzz/corpus/<target>/ (SPEC section 9's lines and small valid/invalid cases).

Run from anywhere: python3 fuzz/make-seeds.py [path/to/SPEC.md] (default ../shared/SPEC.md beside the repository).
"""
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "shared", "SPEC.md")
spec = open(spec_path, encoding="utf-8").read()
examples = spec.split("## 9. Examples")[1].split("```")
records = [line for block in (examples[1], examples[5]) for line in block.strip().splitlines() if line.startswith("{")]
responses = [line for block in (examples[3], examples[5]) for line in block.strip().splitlines() if '"status"' in line]
records = [line for line in records if '"status"' not in line]
assert len(records) == 6 and len(responses) == 6, (records, responses)
rules_example = spec.split("## 5. Commission rules")[1].split("```json")[1].split("```")[0]


def put(target, name, data):
    os.makedirs(os.path.join(here, "corpus", target), exist_ok=True)
    with open(os.path.join(here, "corpus", target, name), "wb") as out:
        out.write(data.encode() if isinstance(data, str) else data)


TS = '"ts":"2026-11-28T10:14:58Z","user":"u"'
validator = records + responses[:2] + [
    '{"type":"capabilities","id":"a",' + TS + ',"authorization":0}',
    '{"type":"capabilities","id":"b","ts":"2026-11-28t10:14:58.9999z","user":"u","authorization":"denied","capabilities":[]}',
    '{"type":"capabilities","id":"c",' + TS + ',"authorization":"authorized","capabilities":259}',
    '{"type":"capabilities","id":"d",' + TS + ',"authorization":3,"capabilities":["x"]}',
    '{"type":"capabilities","id":"e",' + TS + ',"authorization":"authorized","capabilities":1,"subscription":{}}',
    '{"type":"offer.presented","id":"f","ts":"2026-11-28T10:15:00-05:30","user":"u",'
    '"offer":{"action":"subscribe","iTunesItemIdentifier":"1"},"loaded":false}',
    '{"type":"offer.presented","id":"g",' + TS + ',"offer":{"action":"subscribe","itemID":"1","iTunesItemIdentifier":"2"}}',
    '{"type":"offer.presented","id":"h",' + TS + ',"offer":"subscribe"}',
    '{"type":"subscription.outcome","id":"i",' + TS + ',"outcome":"declined","offerId":"f"}',
    '{"type":"subscription.outcome","id":"j",' + TS + ',"outcome":"subscribed","subscription":'
    '{"canPlayCatalogContent":true,"canBecomeSubscriber":false,"hasCloudLibraryEnabled":true}}',
    '{"type":"subscription.outcome","id":"k","ts":"2026-11-28T10:17:41Z","user":"u\\u00e9\\ud83d\\ude00","subscription":'
    '{"canPlayCatalogContent":true,"canBecomeSubscriber":false,"hasCloudLibraryEnabled":null}}',
    '{"type":"unknown","id":"l"}', '{"id":"m"}', '{"type":null}', "{}", "[]", '"x"', "1e999", "-0.0E+1", "NaN",
    '{"a":1,"a":2}', '{"a":"\\ud800"}', '{"a":"\\udc00x"}', '  {"a" : [1, 2.5, -3e-2, true, false, null, {"b":{}}]}  ',
    '{"type":"capabilities","id":"' + "x" * 129 + '"}', '{"type":"capabilities","id":"n","ts":"0000-01-01T00:00:00Z"}',
    '{"type":"capabilities","id":"o","ts":"2026-02-29T00:00:00Z","user":"u"}',
    '{"type":"capabilities","id":"p","ts":"2026-11-28T10:14:60Z","user":"u"}',
    '{"type":"capabilities","id":"q",' + TS.replace('"u"', '"\\u0085"') + "}",
    "[" * 70 + "]" * 70, '{"x":' + "[" * 63 + "]" * 63 + "}", '{"a":"\\u00', '{"a":01}', '{"a":1.}', '{"a":1,}',
]
for index, line in enumerate(validator):
    put("validator", f"seed-{index:02d}", line)
put("validator", "seed-overlong-utf8", b'{"a":"\xc0\xaf"}')
put("validator", "seed-surrogate-utf8", b'{"a":"\xed\xa0\x80"}')
put("validator", "seed-bom", b"\xef\xbb\xbf{}")
put("validator", "seed-nul", b'{"a":"\x00"}')

# framer: byte 0 picks the line limit (1 + byte % 64), byte 1 seeds the chunking, the rest is the stream.
framer = [
    b"\x0f\x01" + b"\n".join(line.encode() for line in records[:2]) + b"\n",
    b"\x07\x02abc\r\ndef\r\r\n\n\r\nxyz", b"\x03\x03" + b"a" * 10 + b"\nb\n" + b"c" * 5,
    b"\x00\x04\n\n\n\r\r\n", b"\x3f\x05" + records[0].encode()[:60] + b"\r", b"\x01\x06ab\nabc\nab\r\nabc\r\n",
    b"\x0a\x07" + bytes(range(256)), b"\x05\x08\xff\xfe\n\x00\x00\n", b"\x02\x09x", b"\x02\x0a\r",
    b"\x04\x0bline1\nline2\nline3 no newline", b"\x3f\xff" + b"\n".join(b"y" * i for i in range(0, 80, 7)),
]
for index, data in enumerate(framer):
    put("framer", f"seed-{index:02d}", data)
for index, line in enumerate(records):
    put("framer", f"seed-spec-{index}", bytes([40 + index, index]) + line.encode() + b"\n" + line.encode())

base = json.loads(rules_example)
R = '{"currency":"USD","rules":[%s]}'
rules = [
    rules_example, json.dumps(base), json.dumps(base, indent=2), '{"currency":"EUR","rules":[]}',
    '{"currency":"usd","rules":[]}', '{"rules":[]}', '{"currency":"USD"}', '{"currency":"USD","rules":{}}',
    '{"currency":"USD","rules":[],"extra":1}', '{"currency":"USD","attributionWindowHours":0,"rules":[]}',
    '{"currency":"USD","attributionWindowHours":9223372036854775807,"rules":[]}',
    '{"currency":"USD","eligibilityFreshnessHours":1.5,"rules":[]}', R % '{"affiliateToken":"*"}',
    R % '{"affiliateToken":"*","amountMinor":-1}', R % '{"affiliateToken":"a b","amountMinor":1}',
    R % '{"affiliateToken":"a","campaignToken":"x&y","amountMinor":1}',
    R % '{"affiliateToken":"a","amountMinor":1,"from":"2026-06-01T00:00:00Z","until":"2026-03-01T00:00:00Z"}',
    R % '{"affiliateToken":"a","amountMinor":1},{"affiliateToken":"a","amountMinor":2}',
    R % ('{"affiliateToken":"a","amountMinor":1,"from":"2026-01-01T00:00:00+01:00"},'
         '{"affiliateToken":"a","amountMinor":2,"from":"2025-12-31T23:00:00Z"}'),
    R % '{"affiliateToken":"a","amountMinor":1,"bonus":1}', R % "null", '{"currency":null,"rules":[]}', "[]", "",
    "garbage", R % '{"affiliateToken":"*","amountMinor":99999999999999999999}',
]
for index, data in enumerate(rules):
    put("rules", f"seed-{index:02d}", data)

# Near the line limit (65,536 bytes before the \n; fuzzed with -max_len=65600): framer seeds whose first byte
# (>= 0xf0) selects the real limit, and validator lines just under and over it.
LIMIT = 65536
put("framer", "seed-limit-exact", b"\xf0\x01" + b"a" * LIMIT + b"\nb\n")
put("framer", "seed-limit-over", b"\xf1\x02" + b"a" * (LIMIT + 1) + b"\nb\n")
put("framer", "seed-limit-cr", b"\xf2\x03" + b"a" * (LIMIT - 1) + b"\r\n" + b"x\n" * 16)
put("framer", "seed-limit-many", b"\xf3\x04" + b"x\n" * (LIMIT // 2 - 4))
big = '{"type":"capabilities","id":"big",' + TS + ',"authorization":"authorized","capabilities":["%s"]}'
put("validator", "seed-limit-valid", big % ("m" * (LIMIT - len(big) - 64)))
put("validator", "seed-limit-spaces", " " * (LIMIT - 2) + "{}")
put("validator", "seed-limit-nested", '{"a":' + "[" * 64 + "1" + "]" * 64 + ',"b":"' + "z" * (LIMIT - 200) + '"}')

# The rules loader with and without holdingPeriodHours (SPEC 5: optional integer >= 0, default 0).
HOLD = '{"currency":"USD",%s"rules":[{"affiliateToken":"*","amountMinor":500}]}'
for name, key in [("none", ""), ("zero", '"holdingPeriodHours":0,'), ("day", '"holdingPeriodHours":24,'),
                  ("negative", '"holdingPeriodHours":-1,'), ("fraction", '"holdingPeriodHours":1.5,'),
                  ("text", '"holdingPeriodHours":"24",'), ("null", '"holdingPeriodHours":null,'),
                  ("huge", '"holdingPeriodHours":9223372036854775807,')]:
    put("rules", f"seed-hold-{name}", HOLD % key)
