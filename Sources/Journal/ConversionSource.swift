import OfferTrackDomain
import SQLite

/// Every current conversion in a range, evaluated under a rules file (inside the caller's transaction).
enum ConversionSource {
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
}
