/// Section 5: query costs. `offertrack report` and `offertrack export` are being written on another branch.
///
/// TODO(queries): once they exist, fill in `measure`: build journals of 1M and 10M records with `BigJournal`,
/// time `offertrack report --db PATH` (and `--by day`) on each, and `offertrack export --date D --out DIR` for the
/// simulated day with the most conversions; return one `ResultRow` per measurement with the time in ms. Until
/// then the rows say so instead of showing a number.
enum QueryCost {
    /// The rows of section 5.
    static func measure() -> [ResultRow] {
        [
            ResultRow(
                section: "5 Queries", name: "`report` over 1M records", value: "not yet available",
                comparison: "TODO: the CLI command is not written yet"),
            ResultRow(
                section: "5 Queries", name: "`report` over 10M records", value: "not yet available",
                comparison: "TODO: the CLI command is not written yet"),
            ResultRow(
                section: "5 Queries", name: "`export` of a busy day", value: "not yet available",
                comparison: "TODO: the CLI command is not written yet"),
        ]
    }
}
