import JSON
import OfferTrackDomain

/// The output formats of `offertrack report --format` (SPEC section 6).
public enum ReportFormat: String, Sendable, Equatable, CaseIterable {
    case table
    case csv
    case json

    /// The rows rendered in this format; every line ends in `\n`. The table writes amounts in `currency`'s
    /// major unit; CSV and JSON keep integer minor units. `MoneyOverflow` when the table's totals do not fit.
    public func render(_ rows: [ReportRow], grouping: ReportGrouping, currency: String) throws(MoneyOverflow) -> String
    {
        switch self {
        case .table: try Self.table(rows, grouping: grouping, currency: currency)
        case .csv: Self.csv(rows)
        case .json: Self.json(rows)
        }
    }

    /// A JSON array with one object per row on its own line, keys in the SPEC's order, `key` null for none;
    /// `[]` when there are no rows.
    public static func json(_ rows: [ReportRow]) -> String {
        guard !rows.isEmpty else { return "[]\n" }
        let objects = rows.map { row in
            JSONWriter.text(
                .object([
                    "key": .string(row.key), "presented": .integer(row.presented),
                    "presentedEligible": .integer(row.presentedEligible), "conversions": .integer(row.conversions),
                    "attributed": .integer(row.attributed), "lapsed": .integer(row.lapsed),
                    "voided": .integer(row.voided), "held": .integer(row.held), "pending": .integer(row.pending),
                    "commissionMinor": .integer(row.commissionMinor),
                    "pendingCommissionMinor": .integer(row.pendingCommissionMinor),
                    "heldCommissionMinor": .integer(row.heldCommissionMinor),
                ]))
        }
        return "[\n" + objects.joined(separator: ",\n") + "\n]\n"
    }

    /// The CSV header: the JSON keys in snake case.
    public static let csvHeader =
        "key,presented,presented_eligible,conversions,attributed,lapsed,voided,held,pending,commission_minor,"
        + "pending_commission_minor,held_commission_minor"

    /// `csvHeader`, then one line per row; the null key is an empty field; SPEC 7 quoting.
    public static func csv(_ rows: [ReportRow]) -> String {
        var out = csvHeader + "\n"
        for row in rows {
            out += CSVField.line([
                row.key ?? "", String(row.presented), String(row.presentedEligible), String(row.conversions),
                String(row.attributed), String(row.lapsed), String(row.voided), String(row.held), String(row.pending),
                String(row.commissionMinor), String(row.pendingCommissionMinor), String(row.heldCommissionMinor),
            ])
        }
        return out
    }

    /// Columns aligned for a terminal (width in characters): the key left-aligned (`(none)` for null), counts and
    /// amounts (in the currency's major unit, the currency in the header) right-aligned, separated by two spaces,
    /// then a `TOTAL` line.
    public static func table(
        _ rows: [ReportRow], grouping: ReportGrouping, currency: String
    ) throws(MoneyOverflow) -> String {
        let header = [
            grouping.rawValue.uppercased(), "PRESENTED", "ELIGIBLE", "CONVERSIONS", "ATTRIBUTED", "LAPSED", "VOIDED",
            "HELD", "PENDING", "COMMISSION \(currency)", "PENDING \(currency)", "HELD \(currency)",
        ]
        var lines: [[String]] = [header]
        for row in rows { lines.append(cells(row, key: row.key ?? "(none)", currency: currency)) }
        lines.append(cells(try ReportRow.total(of: rows, key: "TOTAL"), key: "TOTAL", currency: currency))
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

    private static func cells(_ row: ReportRow, key: String, currency: String) -> [String] {
        [
            key, String(row.presented), String(row.presentedEligible), String(row.conversions), String(row.attributed),
            String(row.lapsed), String(row.voided), String(row.held), String(row.pending),
            Money.format(row.commissionMinor, currency: currency),
            Money.format(row.pendingCommissionMinor, currency: currency),
            Money.format(row.heldCommissionMinor, currency: currency),
        ]
    }
}
