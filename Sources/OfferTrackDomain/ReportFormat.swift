/// The output formats of `offertrack report --format` (SPEC section 6).
public enum ReportFormat: String, Sendable, Equatable, CaseIterable {
    case table
    case csv
    case json

    /// The rows rendered in this format; every line ends in `\n`.
    public func render(_ rows: [ReportRow], grouping: ReportGrouping) -> String {
        switch self {
        case .table: Self.table(rows, grouping: grouping)
        case .csv: Self.csv(rows)
        case .json: Self.json(rows)
        }
    }

    /// A JSON array with one object per row on its own line, keys in the SPEC's order, `key` null for none;
    /// `[]` when there are no rows.
    public static func json(_ rows: [ReportRow]) -> String {
        guard !rows.isEmpty else { return "[]\n" }
        let objects = rows.map { row in
            "{\"key\":\(row.key.map(JSONStringLiteral.quote) ?? "null"),\"presented\":\(row.presented),"
                + "\"presentedEligible\":\(row.presentedEligible),\"conversions\":\(row.conversions),"
                + "\"attributed\":\(row.attributed),\"commissionMinor\":\(row.commissionMinor)}"
        }
        return "[\n" + objects.joined(separator: ",\n") + "\n]\n"
    }

    /// The header `key,presented,presented_eligible,conversions,attributed,commission_minor`, then one line per
    /// row; the null key is an empty field; SPEC 7 quoting.
    public static func csv(_ rows: [ReportRow]) -> String {
        var out = "key,presented,presented_eligible,conversions,attributed,commission_minor\n"
        for row in rows {
            out += CSVField.line([
                row.key ?? "", String(row.presented), String(row.presentedEligible), String(row.conversions),
                String(row.attributed), String(row.commissionMinor),
            ])
        }
        return out
    }

    /// Columns aligned for a terminal (width in characters): the key left-aligned (`(none)` for null), counts and
    /// the commission in minor units right-aligned, separated by two spaces, then a `TOTAL` line.
    public static func table(_ rows: [ReportRow], grouping: ReportGrouping) -> String {
        let header = [
            grouping.rawValue.uppercased(), "PRESENTED", "ELIGIBLE", "CONVERSIONS", "ATTRIBUTED", "COMMISSION_MINOR",
        ]
        var total = ReportRow(key: "TOTAL")
        var lines: [[String]] = [header]
        for row in rows {
            lines.append(cells(row, key: row.key ?? "(none)"))
            total.presented += row.presented
            total.presentedEligible += row.presentedEligible
            total.conversions += row.conversions
            total.attributed += row.attributed
            total.commissionMinor += row.commissionMinor
        }
        lines.append(cells(total, key: "TOTAL"))
        var widths = [Int](repeating: 0, count: header.count)
        for line in lines {
            for (column, cell) in line.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        var out = ""
        for line in lines {
            var text = ""
            for (column, cell) in line.enumerated() {
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                if column == 0 {
                    text += cell + padding
                } else {
                    text += "  " + padding + cell
                }
            }
            out += text + "\n"
        }
        return out
    }

    private static func cells(_ row: ReportRow, key: String) -> [String] {
        [
            key, String(row.presented), String(row.presentedEligible), String(row.conversions), String(row.attributed),
            String(row.commissionMinor),
        ]
    }
}
