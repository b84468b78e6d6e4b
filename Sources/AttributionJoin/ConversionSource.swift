import JournalStore
import OfferTrackDomain
import SQLite

/// Every current conversion in a range, evaluated under a rules file (inside the caller's transaction).
package enum ConversionSource {
    /// From the derived tables when they were computed under `rules`' windows, else recomputed in memory.
    static func forEach(
        _ connection: Connection, range: ReportRange, rules: CommissionRules, _ body: (EvaluatedConversion) -> Void
    ) throws {
        if try DerivedTables.settings(on: connection) == rules.settings {
            try forEachFromDerivedTables(connection, range: range, rules: rules, body)
            return
        }
        try RecordQueries.forEachUser(on: connection) { _, records in
            let attribution = Attribution.attribute(userRecords: records, settings: rules.settings)
            if let conversion = attribution.conversion, range.contains(conversion.ts) {
                body(EvaluatedConversion(conversion, rules: rules))
            }
        }
    }

    static func forEachFromDerivedTables(
        _ connection: Connection, range: ReportRange, rules: CommissionRules, _ body: (EvaluatedConversion) -> Void
    ) throws {
        let conversions = try connection.prepare(
            "SELECT \(DerivedTables.conversionColumns) FROM derived_conversions WHERE ts >= ?1 AND ts < ?2")
        try FunnelQuery.bind(range, to: conversions)
        defer { conversions.reset() }
        while try conversions.step() {
            body(EvaluatedConversion(DerivedTables.conversion(from: conversions), rules: rules))
        }
    }

    /// `forEach`, each page of `pageSize` conversions (in `(ts, id)` order) read in a read transaction of its
    /// own. When the derived tables do not follow `rules`' windows, or stop following them between two pages (a
    /// reload swapped in others), `restart` is called and every conversion is read again in one transaction.
    package static func forEachInPages(
        _ connection: Connection, range: ReportRange, rules: CommissionRules, pageSize: Int,
        _ body: (EvaluatedConversion) -> Void, restart: () -> Void
    ) throws {
        var after: (ts: Int64, id: String)?
        while true {
            let page = try connection.readTransaction { () -> [Conversion]? in
                guard try DerivedTables.settings(on: connection) == rules.settings else { return nil }
                return try derivedConversions(connection, range: range, after: after, limit: pageSize)
            }
            guard let page else {
                restart()
                try connection.readTransaction { try forEach(connection, range: range, rules: rules, body) }
                return
            }
            for conversion in page { body(EvaluatedConversion(conversion, rules: rules)) }
            guard page.count == pageSize, let last = page.last else { return }
            after = (last.ts, last.id)
        }
    }

    /// Up to `limit` derived conversions of `range` after `after` (exclusive), in `(ts, id)` order.
    private static func derivedConversions(
        _ connection: Connection, range: ReportRange, after: (ts: Int64, id: String)?, limit: Int
    ) throws -> [Conversion] {
        let statement = try connection.prepare(
            """
            SELECT \(DerivedTables.conversionColumns) FROM derived_conversions
            WHERE ts >= ?1 AND ts < ?2 AND (ts, id) > (?3, ?4) ORDER BY ts, id LIMIT ?5
            """)
        try FunnelQuery.bind(range, to: statement)
        try statement.bind(after?.ts ?? Int64.min, at: 3)
        try statement.bind(after?.id ?? "", at: 4)
        try statement.bind(Int64(limit), at: 5)
        defer { statement.reset() }
        var conversions: [Conversion] = []
        conversions.reserveCapacity(limit)
        while try statement.step() { conversions.append(DerivedTables.conversion(from: statement)) }
        return conversions
    }
}
