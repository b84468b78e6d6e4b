import JSON

/// The hand-written lines both validator paths must answer alike: every type valid, every check failing, and the
/// JSON the scan handles itself (member names with escapes, repeats, nulls, unknown members, nesting, UTF-8).
enum FusedValidationCases {
    static let common = #""id":"r-1","ts":"2026-11-28T10:15:00Z","user":"u-1""#
    static let caps = #"{"type":"capabilities","# + common
    static let presented = #"{"type":"offer.presented","# + common
    static let outcome = #"{"type":"subscription.outcome","# + common
    static let review = #"{"type":"review","# + common
    static let erasure = #"{"type":"erasure","# + common
    static let subscription =
        #""subscription":{"canPlayCatalogContent":false,"canBecomeSubscriber":true,"hasCloudLibraryEnabled":false}"#

    /// Valid records of every type, with their optional members.
    static let valid: [String] = [
        caps + #","authorization":"authorized","capabilities":["musicCatalogSubscriptionEligible"]}"#,
        caps + #","app":"com.example.radio","device":"d-1","authorization":3,"capabilities":258}"#,
        caps + #","authorization":"denied"}"#,
        caps + #","authorization":0}"#,
        caps + "," + #""authorization":"authorized","# + subscription + "}",
        presented + #","offer":{"action":"subscribe","affiliateToken":"Zed_fm","campaignToken":"c 1","#
            + #""messageIdentifier":"join","itemID":"1450695723"},"loaded":false}"#,
        presented + #","offer":{"action":"subscribe","iTunesItemIdentifier":"12"}}"#,
        outcome + #","outcome":"subscribed","offerId":"o-1"}"#,
        outcome + #","capabilities":["musicCatalogPlayback"]}"#,
        outcome + "," + subscription + "}",
        review + #","conversion":"o-1","decision":"void","reason":"fraud","note":"n\u00e9"}"#,
        review + #","conversion":"o-1","decision":"release"}"#,
        erasure + #","ticket":"T-1"}"#,
        #"  {"type":"capabilities","authorization":"denied","# + common + "}\t\r\n ",
        #"{"user":"u-1","ts":"2026-11-28T10:15:00+01:00","id":"r-9","authorization":1,"type":"capabilities"}"#,
    ]

    /// Lines refused by a record check, one per check and type.
    static let refusedRecords: [String] = [
        "{}", #"{"id":"r-1"}"#, #"{"type":"nope","id":"r-1"}"#, #"{"type":1}"#, #"{"type":"capabilities"}"#,
        #"{"type":"capabilities","id":"bad id"}"#, #"{"type":"capabilities","id":7,"ts":1}"#,
        #"{"type":"erasure","id":"\#(String(repeating: "e", count: 101))","ts":"2026-11-28T10:15:00Z"}"#,
        #"{"type":"capabilities","id":"r-1"}"#, #"{"type":"capabilities","id":"r-1","ts":"2026-13-28T10:15:00Z"}"#,
        #"{"type":"capabilities","id":"r-1","ts":"2026-11-28T10:15:00Z"}"#,
        #"{"type":"capabilities","id":"r-1","ts":"2026-11-28T10:15:00Z","user":""}"#,
        #"{"type":"capabilities","id":"r-1","ts":"2026-11-28T10:15:00Z","user":"a\u0001"}"#,
        #"{"type":"capabilities","id":"r-1","ts":"2026-11-28T10:15:00Z","user":["u"]}"#,
        caps + #","app":"\#(String(repeating: "a", count: 256))","authorization":"denied"}"#,
        caps + #","device":7,"authorization":"denied"}"#,
        caps + "}", caps + #","authorization":"authorized"}"#, caps + #","authorization":4}"#,
        caps + #","authorization":3.0}"#, caps + #","authorization":"authorized","capabilities":["x"]}"#,
        caps + #","authorization":"authorized","capabilities":512}"#,
        caps + #","authorization":"authorized","capabilities":[],"# + subscription + "}",
        caps + #","authorization":"authorized","subscription":{"canPlayCatalogContent":1}}"#,
        presented + "}", presented + #","offer":[]}"#, presented + #","offer":{}}"#,
        presented + #","offer":{"action":"subscribe","affiliateToken":"a b"}}"#,
        presented + #","offer":{"action":"subscribe","campaignToken":"a&b"}}"#,
        presented + #","offer":{"action":"subscribe","messageIdentifier":"x"}}"#,
        presented + #","offer":{"action":"subscribe","itemID":"1","iTunesItemIdentifier":"2"}}"#,
        presented + #","offer":{"action":"subscribe","itemID":12}}"#,
        presented + #","offer":{"action":"subscribe"},"loaded":"no"}"#,
        outcome + "}", outcome + #","outcome":"maybe"}"#, outcome + #","outcome":"declined","capabilities":1}"#,
        outcome + #","outcome":"declined","# + subscription + "}", outcome + #","outcome":"declined","offerId":"a b"}"#,
        review + "}", review + #","conversion":"a b"}"#, review + #","conversion":"o-1"}"#,
        review + #","conversion":"o-1","decision":"hold"}"#, review + #","conversion":"o-1","decision":"nope"}"#,
        review + #","conversion":"o-1","decision":"void","reason":"x"}"#,
        review + #","conversion":"o-1","decision":"release","note":""}"#,
        erasure + "}", erasure + #","ticket":""}"#,
        #"{"type":"erasure","id":"r-1","ts":"2026-11-28T10:15:00Z","user":"anonymous","ticket":"T"}"#,
    ]

    /// Member names with escapes, repeats, nulls and unknown members at the top level and nested.
    static let members: [String] = [
        #"{"\u0074ype":"capabilities","i\u0064":"r-1","ts":"2026-11-28T10:15:00Z","\u0075ser":"u","authorization":0}"#,
        #"{"type":"capabilities","id":"r-1","\u0069d":"r-2"}"#, #"{"type":"capabilities","i\u0064":"r-1","id":"r-2"}"#,
        #"{"type":"capabilities","type":"review"}"#, #"{"id":"r-1","type":"capabilities","id":"r-1"}"#,
        #"{"type":"capabilities","id":null,"id":"r-1"}"#, #"{"type":null,"id":"r-1"}"#,
        caps + #","authorization":null,"capabilities":null}"#, caps + #","app":null,"device":null,"authorization":2}"#,
        caps + #","authorization":0,"x":1,"x":2}"#, caps + #","authorization":0,"x":1,"\u0078":2}"#,
        caps + #","authorization":0,"x":1,"y":2,"X":3}"#, caps + #","authorization":0,"caf\u00e9":1,"cafe\u0301":2}"#,
        caps + #","authorization":0,"caf\u00e9":1,"café":2}"#, caps + #","authorization":0,"\/":1,"/":2}"#,
        caps + #","authorization":0,"":1,"":2}"#, caps + #","authorization":0,"x":1,"x":[}"#,
        caps + #","authorization":0,"x":{"a":1,"a":2}}"#, caps + #","authorization":0,"x":[{"a":1,"\u0061":2}]}"#,
        caps + #","authorization":0,"x":{"a":{"b":null,"b":null}}}"#,
        caps + #","authorization":"authorized","# + String(subscription.dropLast()) + #","canBecomeSubscriber":true}}"#,
        presented + #","offer":{"action":"subscribe","action":"subscribe"}}"#,
        caps + #","authorization":0,"x":{"a":1},"y":{"a":1},"x":{}}"#,
        caps + #","authorization":0,"Type":"x","type ":"y","TYPE":"z"}"#,
        caps + #","authorization":0,"\ud83d\ude00":1,"😀":2}"#, caps + #","authorization":0,"\ud83d":1}"#,
        caps + #","authorization":0,"\udc00":1}"#, caps + #","authorization":0,"\u00":1}"#,
        caps + #","authorization":0,"\q":1}"#, caps + #","authorization":0,"a\u0000b":1,"a\u0000c":2}"#,
        caps + #","authorization":0,"appVersion":"1.2.3","locale":"fr_FR","n":-0.5e+3,"t":true,"f":false}"#,
        #"{"type":"capabilities","id":"r-1","ts":"2026-11-28T10:15:00Z","user":"u","authorization":"denied","#
            + (0..<20).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + "}",
        #"{"type":"capabilities","id":"r-1","ts":"2026-11-28T10:15:00Z","user":"u","authorization":"denied","#
            + (0..<20).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + #","k3":3}"#,
        #"{"type":"capabilities","id":"r-1","ts":"2026-11-28T10:15:00Z","user":"u","authorization":"denied","#
            + (0..<20).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + #","k\u0031":3}"#,
        #"{"# + (0..<20).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + #","id":"r-1","i\u0064":"r"}"#,
    ]

    /// Lines that are not JSON, or not one object.
    static let notJSON: [String] = [
        "", " ", "\t\r\n", "[]", "1", #""s""#, "null", "true", "[{}]", "{", "}", "{,}", #"{"a"}"#, #"{"a":}"#,
        #"{"a":1,}"#, #"{"a" 1}"#, #"{"a":1 "b":2}"#, #"{"a":1"#, #"{"a":1 "#, #"{"a""#, #"{"a"#, #"{a:1}"#,
        "{'a':1}", #"{"a":1}}"#, #"{"a":1} x"#, #"{"a":1}{}"#, #"{"a":1} ,"#, #"{"a":tru}"#, #"{"a":nul}"#,
        #"{"a":NaN}"#, #"{"a":Infinity}"#, #"{"a":-}"#, #"{"a":01}"#, #"{"a":1.}"#, #"{"a":1e}"#, #"{"a":1e+}"#,
        #"{"a":.5}"#, #"{"a":+1}"#, #"{"a":-01}"#, #"{"id":01}"#, #"{"id":-}"#, #"{"id":1.e2}"#, #"{"id":tru}"#,
        #"{"a":"\x"}"#, #"{"a":"\u12"}"#, #"{"a":"\ud800"}"#, #"{"a":"\ud800\u0041"}"#, #"{"id":"\udc00"}"#,
        #"{"a":[1,]}"#, #"{"a":[1 2]}"#, #"{"a":[}"#, #"{"a":{"b"}}"#, "\u{FEFF}{}", #"{"a":1}"# + "\u{0}",
        "{\"a\":\"\n\"}", "{\"\t\":1}", "{\"id\":\"\u{1}\"}", #"{"a":"é"}"#,
        #"{"type":"capabilities"  ,  "id" : "r-1" }"#,
        "{" + String(repeating: #""a":{"#, count: 63) + String(repeating: "}", count: 63) + "}",
        "{" + String(repeating: #""a":{"#, count: 64) + String(repeating: "}", count: 64) + "}",
        #"{"x":"# + String(repeating: "[", count: 63) + String(repeating: "]", count: 63) + "}",
        #"{"x":"# + String(repeating: "[", count: 64) + String(repeating: "]", count: 64) + "}",
        #"{"offer":"# + String(repeating: "[", count: 63) + String(repeating: "]", count: 63) + "}",
        #"{"offer":"# + String(repeating: "[", count: 64) + String(repeating: "]", count: 64) + "}",
        String(repeating: "[", count: 70), String(repeating: "{\"a\":", count: 70),
    ]

    /// Every line of the table that is text.
    static let lines: [String] = valid + refusedRecords + members + notJSON

    /// Lines with bytes that are not UTF-8 (or not well-formed UTF-8), in names, kept values and other values.
    static let byteLines: [[UInt8]] = {
        let bad: [[UInt8]] = [
            [0x80], [0xC0, 0xAF], [0xC3], [0xC3, 0x28], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xEF, 0xBF],
            [0xF0, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0x7F],
            [0xC3, 0xA9], [0xF0, 0x9F, 0x98, 0x80],
        ]
        var lines: [[UInt8]] = [[0xEF, 0xBB, 0xBF] + Array(valid[0].utf8)]
        for sequence in bad {
            lines.append(Array(#"{"a"#.utf8) + sequence + Array(#"":1}"#.utf8))
            lines.append(Array(#"{"type":"capabilities","id":"r-1","user":"u"#.utf8) + sequence + Array(#""}"#.utf8))
            lines.append(Array((caps + #","authorization":0,"x":"#).utf8) + sequence + Array(#""}"#.utf8))
            lines.append(Array((caps + #","authorization":0,"x":["a"#).utf8) + sequence + Array(#""]}"#.utf8))
            lines.append(Array(#"{"type":"capabilities","id":"r-1"}"#.utf8) + sequence)
        }
        return lines
    }()
}
