#!/bin/sh
# Writes every report (each grouping and format), explanation (each format) and export of the fixture journal
# into OUT, with the offertrack at BIN. Exports publish days inside the journal, so run it on a copy.
# The checked-in outputs/ were written by the schema-7 offertrack (main before schema 8):
#   record-outputs.sh /path/to/old/offertrack copy-of-journal.db outputs
# Usage: record-outputs.sh BIN JOURNAL OUT
set -eu
bin=$1
db=$2
out=$3
here=$(dirname "$0")
rules=$here/rules.json
asof=2026-12-31
mkdir -p "$out"
for by in affiliate campaign message day; do
    for format in table csv json; do
        "$bin" report --db "$db" --rules "$rules" --as-of $asof --by $by --format $format >"$out/report-$by.$format"
    done
    "$bin" report --db "$db" --rules "$rules" --as-of $asof --by $by --format html --out "$out/report-$by.html"
    # The page says when it was generated: left out, like the exports' generatedAt.
    sed 's|<dt>Generated</dt><dd>[^<]*</dd>||' "$out/report-$by.html" >"$out/report-$by.html.tmp"
    mv "$out/report-$by.html.tmp" "$out/report-$by.html"
    "$bin" report --db "$db" --rules "$rules" --as-of 2026-11-04 --since 2026-11-02 --until 2026-11-06 --by $by \
        --format csv >"$out/report-$by-range.csv"
done
for format in text json; do
    : >"$out/explain.$format"
    while read -r user; do
        "$bin" explain --db "$db" --rules "$rules" --as-of $asof --user "$user" --format $format >>"$out/explain.$format"
    done <"$here/users.txt"
done
"$bin" explain --db "$db" --rules "$rules" --as-of $asof --id rv-4 --format json >"$out/explain-id.json"
# Exports and the month's payouts; generatedAt is when the command ran, so it is left out.
mkdir -p "$out/exports"
day=1
while [ $day -le 30 ]; do
    date=$(printf '2026-11-%02d' $day)
    "$bin" export --db "$db" --rules "$rules" --date "$date" --out "$out/exports" >/dev/null
    day=$((day + 1))
done
"$bin" payouts --db "$db" --rules "$rules" --month 2026-11 --out "$out/exports" >/dev/null
for manifest in "$out"/exports/*.manifest.json; do
    sed 's/,"generatedAt":"[^"]*"//' "$manifest" >"$manifest.tmp" && mv "$manifest.tmp" "$manifest"
done
"$bin" verify --db "$db" --rules "$rules" >"$out/verify.txt"
