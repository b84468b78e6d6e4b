import OfferTrackDomain
import SQLite

/// The funnel report (SPEC section 6) read from the journal.
///
/// When the derived tables were computed under the same windows as `rules`, presentations are counted by SQL over
/// `derived_presentations` and only conversions are read row by row (their amounts come from `rules`). Otherwise
/// attribution is recomputed in memory from every journaled record, one user at a time.
public enum FunnelQuery {
    /// The report's rows, read in one snapshot of the journal.
    public static func rows(
        _ reader: JournalReader, grouping: ReportGrouping, range: ReportRange, rules: CommissionRules
    ) throws -> [ReportRow] {
        let connection = reader.connection
        try connection.execute("BEGIN")
        defer { connection.rollbackIfActive() }
        if try DerivedTables.settings(on: connection) == rules.settings {
            return try fromDerivedTables(connection, grouping: grouping, range: range, rules: rules)
        }
        return try recomputed(connection, grouping: grouping, range: range, rules: rules)
    }

    private static func fromDerivedTables(
        _ connection: Connection, grouping: ReportGrouping, range: ReportRange, rules: CommissionRules
    ) throws -> [ReportRow] {
        var accumulator = ReportAccumulator()
        let key: String =
            switch grouping {
            case .affiliate: "affiliate_token"
            case .campaign: "campaign_token"
            case .message: "message_identifier"
            case .day: "(ts - ((ts % 86400000) + 86400000) % 86400000) / 86400000"
            }
        let presentations = try connection.prepare(
            """
            SELECT \(key), count(*), sum(eligible) FROM derived_presentations
            WHERE ts >= ?1 AND ts < ?2 GROUP BY 1
            """)
        try bind(range, to: presentations)
        defer { presentations.reset() }
        while try presentations.step() {
            let groupKey: String? =
                grouping == .day ? Timestamp.formatDay(presentations.int64(0) * 86_400_000) : presentations.text(0)
            accumulator.merge(
                ReportRow(
                    key: groupKey, presented: Int(presentations.int64(1)),
                    presentedEligible: Int(presentations.int64(2))))
        }
        try ConversionSource.forEachFromDerivedTables(connection, range: range, rules: rules) {
            accumulator.add($0, grouping: grouping, range: range)
        }
        return accumulator.rows()
    }

    private static func recomputed(
        _ connection: Connection, grouping: ReportGrouping, range: ReportRange, rules: CommissionRules
    ) throws -> [ReportRow] {
        var accumulator = ReportAccumulator()
        try JournalRows.forEachUser(on: connection) { _, records in
            let attribution = Attribution.attribute(userRecords: records, settings: rules.settings)
            for presentation in attribution.presentations {
                accumulator.add(presentation, grouping: grouping, range: range)
            }
            if let conversion = attribution.conversion {
                accumulator.add(EvaluatedConversion(conversion, rules: rules), grouping: grouping, range: range)
            }
        }
        return accumulator.rows()
    }

    static func bind(_ range: ReportRange, to statement: Statement) throws {
        try statement.bind(range.since ?? Int64.min, at: 1)
        try statement.bind(range.until ?? Int64.max, at: 2)
    }
}
