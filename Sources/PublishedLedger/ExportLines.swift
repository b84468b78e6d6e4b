import OfferTrackDomain
import SQLite

/// A published day's export lines stored as rows (`export_lines`, schema 14), beside its CSV: what the fleet's export
/// merges (SPEC 10). Each line is stored as the plan made it (`ExportPlan.Line`): its kind, the row's columns with
/// the row's own amount (a reversal's is negated only when written), whether it reverses the row in force and the
/// published day it corrects, numbered in the file's order.
public enum ExportLines {
    /// Stores `lines` as those of `run`, the first numbered `first`.
    static func insert(_ lines: ArraySlice<ExportPlan.Line>, first: Int, run: Int64, on connection: Connection) throws {
        let insert = try connection.prepare(
            """
            INSERT INTO export_lines (run, line, kind, reversal, original_date, conversion_id, converted_at, offer_id,
                presented_at, affiliate_token, campaign_token, message_identifier, item_id, amount_minor, currency)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
            """)
        for (offset, line) in lines.enumerated() {
            let row = line.row
            try insert.bind(run, at: 1)
            try insert.bind(Int64(first + offset), at: 2)
            try insert.bind(line.kind.rawValue, at: 3)
            try insert.bind(line.isReversal ? 1 : 0, at: 4)
            try insert.bind(line.originalDate, at: 5)
            try insert.bind(row.conversionId, at: 6)
            try insert.bindColumns(of: row, from: 7)
            try insert.run()
        }
    }

    /// Stored lines that are not what the export wrote: a line out of its place or of an unknown kind, or fewer or
    /// more lines than the run names. The journal is damaged; another run of the export cannot mend it.
    public struct Unreadable: Error, CustomStringConvertible {
        public let description: String
    }

    /// The lines `run` stores, in order; nil when it stores none (staged before schema 14: `export_runs.lines` is
    /// NULL). Throws when the run stores other than the number of lines it names.
    static func read(run: Int64, on connection: Connection) throws -> [ExportPlan.Line]? {
        let expected = try connection.scalarInt("SELECT lines FROM export_runs WHERE run = ?1", binding: run)
        guard let expected else { return nil }
        let statement = try connection.prepare(
            """
            SELECT line, kind, reversal, original_date, conversion_id, converted_at, offer_id, presented_at,
                affiliate_token, campaign_token, message_identifier, item_id, amount_minor, currency
            FROM export_lines WHERE run = ?1 ORDER BY line
            """)
        try statement.bind(run, at: 1)
        defer { statement.reset() }
        var lines: [ExportPlan.Line] = []
        lines.reserveCapacity(Int(clamping: expected))
        while try statement.step() {
            let s = statement
            guard s.int64(0) == Int64(lines.count), let kind = ExportPlan.Line.Kind(rawValue: s.text(1) ?? "") else {
                throw Unreadable(description: "export run \(run): line \(s.int64(0)) is not a stored export line")
            }
            let row = CommissionRow(
                conversionId: s.text(4) ?? "", convertedAt: s.int64(5), offerId: s.text(6) ?? "",
                presentedAt: s.int64(7), affiliateToken: s.text(8) ?? "", campaignToken: s.text(9),
                messageIdentifier: s.text(10) ?? "", itemID: s.text(11), amountMinor: s.int64(12),
                currency: s.text(13) ?? "")
            lines.append(
                ExportPlan.Line(kind: kind, row: row, isReversal: s.int64(2) != 0, originalDate: s.text(3)))
        }
        guard lines.count == expected else {
            throw Unreadable(description: "export run \(run) names \(expected) lines and stores \(lines.count)")
        }
        return lines
    }
}

extension Statement {
    /// Binds `row`'s columns after its conversion id, in the order the export's tables store them
    /// (`converted_at`, `offer_id`, `presented_at`, `affiliate_token`, `campaign_token`, `message_identifier`,
    /// `item_id`, `amount_minor`, `currency`), the first at `first`.
    func bindColumns(of row: CommissionRow, from first: Int32) throws {
        try bind(row.convertedAt, at: first)
        try bind(row.offerId, at: first + 1)
        try bind(row.presentedAt, at: first + 2)
        try bind(row.affiliateToken, at: first + 3)
        try bind(row.campaignToken, at: first + 4)
        try bind(row.messageIdentifier, at: first + 5)
        try bind(row.itemID, at: first + 6)
        try bind(row.amountMinor, at: first + 7)
        try bind(row.currency, at: first + 8)
    }
}
