import OfferTrackDomain
import SQLite

/// What published export days hold (SPEC 7): each day's files as first published, and the ledger of rows in force.
///
/// A day published since schema 9 names its run, whose CSV is in parts (`ExportStaging`); a day published before
/// keeps its CSV in its own row. A run staged since schema 14 also stores the day's lines as rows (`ExportLines`).
package enum PublishedDays {
    /// A published day's files, as first published; nil when the day is not published.
    package static func files(of day: String, on connection: Connection) throws -> (csv: [UInt8], manifest: [UInt8])? {
        let statement = try connection.prepare("SELECT csv, manifest, run FROM published_days WHERE day = ?1")
        try statement.bind(day, at: 1)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        let manifest = statement.bytes(1)
        guard !statement.isNull(2) else { return (statement.bytes(0), manifest) }
        return (try csv(ofRun: statement.int64(2), on: connection), manifest)
    }

    /// A published day's lines as stored at its publication, in order; nil when the day is not published or was
    /// published before schema 14 (it has its CSV only).
    static func lines(of day: String, on connection: Connection) throws -> [ExportPlan.Line]? {
        guard let run = try connection.scalarInt("SELECT run FROM published_days WHERE day = ?1", binding: day)
        else { return nil }
        return try ExportLines.read(run: run, on: connection)
    }

    /// The CSV of every published day from `first` through `last` (`YYYY-MM-DD`), in day order.
    static func forEachCSV(
        from first: String, through last: String, on connection: Connection, _ body: (String, [UInt8]) throws -> Void
    ) throws {
        let statement = try connection.prepare(
            "SELECT day FROM published_days WHERE day >= ?1 AND day <= ?2 ORDER BY day")
        let days: [String] = try {
            defer { statement.reset() }
            try statement.bind(first, at: 1)
            try statement.bind(last, at: 2)
            var days: [String] = []
            while try statement.step() { days.append(statement.text(0) ?? "") }
            return days
        }()
        for day in days {
            guard let files = try files(of: day, on: connection) else { continue }
            try body(day, files.csv)
        }
    }

    /// A run's CSV: its parts in order.
    private static func csv(ofRun run: Int64, on connection: Connection) throws -> [UInt8] {
        let statement = try connection.prepare("SELECT bytes FROM export_parts WHERE run = ?1 ORDER BY part")
        try statement.bind(run, at: 1)
        defer { statement.reset() }
        var csv: [UInt8] = []
        while try statement.step() { csv.append(contentsOf: statement.bytes(0)) }
        return csv
    }

    /// The row in force for each published day and conversion: `export_ledger`'s (days published before schema
    /// 9), then each published run's entries in day order (days are published in order, so the last wins).
    static func ledger(on connection: Connection) throws -> [String: [ExactString: CommissionRow]] {
        var inForce: [String: [ExactString: CommissionRow]] = [:]
        for day in try connection.allTexts("SELECT day FROM published_days") { inForce[day] = [:] }
        let rowColumns =
            "converted_at, offer_id, presented_at, affiliate_token, campaign_token, message_identifier, item_id, "
            + "amount_minor, currency"
        let before = try connection.prepare(
            "SELECT original_date, conversion_id, 0, \(rowColumns) FROM export_ledger")
        let runs = try connection.prepare(
            """
            SELECT e.original_date, e.conversion_id, e.removed, \(rowColumns.split(separator: ", ").map { "e.\($0)" }.joined(separator: ", "))
            FROM published_days p JOIN ledger_entries e ON e.run = p.run ORDER BY p.day
            """)
        for statement in [before, runs] {
            defer { statement.reset() }
            while try statement.step() {
                let s = statement
                let day = s.text(0) ?? ""
                let id = ExactString(s.text(1) ?? "")
                guard s.int64(2) == 0 else {
                    inForce[day]?[id] = nil
                    continue
                }
                inForce[day, default: [:]][id] = CommissionRow(
                    conversionId: id.value, convertedAt: s.int64(3), offerId: s.text(4) ?? "",
                    presentedAt: s.int64(5), affiliateToken: s.text(6) ?? "", campaignToken: s.text(7),
                    messageIdentifier: s.text(8) ?? "", itemID: s.text(9), amountMinor: s.int64(10),
                    currency: s.text(11) ?? "")
            }
        }
        return inForce
    }
}
