import JSON
import OfferTrackDomain

/// The output formats of `offertrack reconcile --format` (SPEC section 13). The affiliate token is a column only
/// when the network's file has one (`perAffiliate`).
public enum ReconciliationFormat: String, Sendable, Equatable, CaseIterable {
    case table
    case csv
    case json

    /// `rows` rendered in this format; every line ends in `\n`. Only the table has the totals.
    public func render(_ rows: [ReconciliationRow], perAffiliate: Bool) throws(Reconciliation.CountOverflow)
        -> String
    {
        switch self {
        case .table: try Self.table(rows, perAffiliate: perAffiliate)
        case .csv: Self.csv(rows, perAffiliate: perAffiliate)
        case .json: Self.json(rows, perAffiliate: perAffiliate)
        }
    }

    /// One array, an object per row on its own line with the SPEC's keys in its order: `affiliateToken` only per
    /// affiliate, `campaignToken` null for none; `[]` when there are no rows.
    static func json(_ rows: [ReconciliationRow], perAffiliate: Bool) -> String {
        guard !rows.isEmpty else { return "[]\n" }
        let objects = rows.map { row in
            var members: [(key: String, value: JSONValue)] = []
            if perAffiliate { members.append(("affiliateToken", JSONValue.string(row.group.affiliateToken ?? ""))) }
            members += [
                ("campaignToken", JSONValue.string(row.group.campaignToken.isEmpty ? nil : row.group.campaignToken)),
                ("status", JSONValue.string(row.status.rawValue)), ("ours", JSONValue.integer(row.ours)),
                ("theirs", JSONValue.integer(row.theirs)), ("class", JSONValue.string(row.rowClass.rawValue)),
            ]
            return JSONWriter.text(JSONValue.object(members))
        }
        return "[\n" + objects.joined(separator: ",\n") + "\n]\n"
    }

    /// The header, then one line per row; an empty campaign token for none; SPEC 7 quoting; no totals.
    static func csv(_ rows: [ReconciliationRow], perAffiliate: Bool) -> String {
        let header = ["campaign_token", "status", "ours", "theirs", "class"]
        var out = CSVField.line((perAffiliate ? ["affiliate_token"] : []) + header)
        for row in rows { out += CSVField.line(cells(row, perAffiliate: perAffiliate, none: "")) }
        return out
    }

    /// Columns aligned for a terminal: tokens and status left-aligned (`(none)` for no campaign token), counts
    /// right-aligned, two spaces apart, then a `TOTAL` line per status.
    static func table(_ rows: [ReconciliationRow], perAffiliate: Bool) throws(Reconciliation.CountOverflow)
        -> String
    {
        var lines = [(perAffiliate ? ["AFFILIATE"] : []) + ["CAMPAIGN", "STATUS", "OURS", "THEIRS", "CLASS"]]
        lines += rows.map { cells($0, perAffiliate: perAffiliate, none: "(none)") }
        for total in try Reconciliation.totals(rows) {
            var line = cells(total, perAffiliate: perAffiliate, none: "")
            line[0] = "TOTAL"
            lines.append(line)
        }
        let counts = Set([lines[0].count - 3, lines[0].count - 2])
        var widths = [Int](repeating: 0, count: lines[0].count)
        for line in lines {
            for (column, cell) in line.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        return lines.map { line in
            line.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return counts.contains(column) ? padding + cell : cell + padding
            }.joined(separator: "  ").trailingSpacesRemoved + "\n"
        }.joined()
    }

    private static func cells(_ row: ReconciliationRow, perAffiliate: Bool, none: String) -> [String] {
        (perAffiliate ? [row.group.affiliateToken ?? ""] : []) + [
            row.group.campaignToken.isEmpty ? none : row.group.campaignToken, row.status.rawValue, String(row.ours),
            String(row.theirs), row.rowClass.rawValue,
        ]
    }
}

extension String {
    /// The string without the spaces at its end.
    fileprivate var trailingSpacesRemoved: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
