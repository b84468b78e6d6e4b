import JournalStore
import OfferTrackDomain
import SQLite

/// The funnel report (SPEC section 6) read from the journal.
///
/// When the derived tables were computed under the same windows as `rules`, presentations are counted by SQL over
/// `derived_presentations` and only conversions are read row by row (their amounts come from `rules`). Otherwise
/// attribution is recomputed in memory from every journaled record, one user at a time.
public enum FunnelQuery {
    /// The report's rows, read in one snapshot of the journal, with conversions seen at `asOf` (rule 4.6).
    public static func rows(
        _ reader: ReadOnlyJournal, grouping: ReportGrouping, range: ReportRange, rules: CommissionRules, asOf: Int64
    ) throws -> [ReportRow] {
        try rows(reader, grouping: grouping, range: range, rules: rules, asOf: asOf, recompute: false)
    }

    /// The report over several journals read as one (SPEC section 10): each user's records are in exactly one
    /// of them, so the groups add up.
    public static func rows(
        _ readers: [ReadOnlyJournal], grouping: ReportGrouping, range: ReportRange, rules: CommissionRules, asOf: Int64
    ) throws -> [ReportRow] {
        guard readers.count != 1 else {
            return try rows(readers[0], grouping: grouping, range: range, rules: rules, asOf: asOf)
        }
        var accumulator = ReportAccumulator(asOf: asOf)
        for reader in readers {
            for row in try rows(reader, grouping: grouping, range: range, rules: rules, asOf: asOf) {
                accumulator.merge(row)
            }
        }
        return try accumulator.rows()
    }

    /// Calls `body` with every conversion whose `ts` is in `range`, evaluated under `rules`, from one snapshot of each
    /// journal in turn (several are read as one, SPEC section 10).
    public static func forEachConversion(
        _ readers: [ReadOnlyJournal], range: ReportRange, rules: CommissionRules,
        _ body: (EvaluatedConversion) -> Void
    ) throws {
        for reader in readers {
            let connection = reader.connection
            try connection.execute("BEGIN")
            defer { connection.rollbackIfActive() }
            try ConversionSource.forEach(connection, range: range, rules: rules, body)
        }
    }

    /// `recompute` forces the in-memory path (tests compare both paths).
    static func rows(
        _ reader: ReadOnlyJournal, grouping: ReportGrouping, range: ReportRange, rules: CommissionRules, asOf: Int64,
        recompute: Bool
    ) throws -> [ReportRow] {
        let connection = reader.connection
        try connection.execute("BEGIN")
        defer { connection.rollbackIfActive() }
        var accumulator = ReportAccumulator(asOf: asOf)
        // Presentations of sealed days (SPEC 12) are the counts sealing kept; the rest come from the records.
        let sealed = try SealState.read(on: connection)
        try SealedDays.check(range, sealed)
        let sealedEnd = sealed.map { $0.lastSealedDay + 1 } ?? Int64.min / Timestamp.millisecondsPerDay
        let (firstDay, endDay) = wholeDays(range)
        try DayRollup.addPresentationDays(
            connection, table: .sealed, from: firstDay, to: min(endDay, sealedEnd), grouping: grouping,
            into: &accumulator)
        let unsealed = ReportRange(
            since: max(range.since ?? Int64.min, sealedEnd * Timestamp.millisecondsPerDay), until: range.until)
        if !recompute, try DerivedTables.settings(on: connection) == rules.settings {
            try fromDerivedTables(
                connection, grouping: grouping, range: range, presentations: unsealed, rules: rules,
                into: &accumulator)
        } else {
            try recomputed(
                connection, grouping: grouping, range: range, presentations: unsealed, rules: rules,
                into: &accumulator)
        }
        return try accumulator.rows()
    }

    /// The whole days inside `range`: `[firstDay, endDay)`.
    private static func wholeDays(_ range: ReportRange) -> (firstDay: Int64, endDay: Int64) {
        let dayMs = Timestamp.millisecondsPerDay
        return (
            range.since.map { DayRollup.day(of: $0 - 1) + 1 } ?? Int64.min / dayMs,
            range.until.map { DayRollup.day(of: $0) } ?? Int64.max / dayMs
        )
    }

    /// Whole days come from the daily roll-ups; the partial days at the range's edges, days on which a
    /// commission rule starts or ends, and the day whose conversions qualify partly by `asOf`, from the derived
    /// rows. Presentations are counted in `presentations` only (the range less the sealed days).
    private static func fromDerivedTables(
        _ connection: Connection, grouping: ReportGrouping, range: ReportRange, presentations: ReportRange,
        rules: CommissionRules, into accumulator: inout ReportAccumulator
    ) throws {
        let dayMs = Timestamp.millisecondsPerDay
        let (firstDay, endDay) = wholeDays(range)
        var partial: [ReportRange] = []
        if firstDay >= endDay {
            partial = [range]
        } else {
            if let since = range.since, since < firstDay * dayMs {
                partial.append(ReportRange(since: since, until: firstDay * dayMs))
            }
            if let until = range.until, until > endDay * dayMs {
                partial.append(ReportRange(since: endDay * dayMs, until: until))
            }
            let (firstPresentationDay, _) = wholeDays(presentations)
            try DayRollup.addPresentationDays(
                connection, table: .live, from: max(firstDay, firstPresentationDay), to: endDay, grouping: grouping,
                into: &accumulator)
            let changingDays = try addConversionDays(
                connection, from: firstDay, to: endDay, grouping: grouping, rules: rules, into: &accumulator)
            for day in changingDays {
                try ConversionSource.forEachFromDerivedTables(
                    connection, range: ReportRange(since: day * dayMs, until: (day + 1) * dayMs), rules: rules
                ) { accumulator.add($0, grouping: grouping, range: range) }
            }
        }
        for part in partial {
            // A partial day is never sealed (`SealedDays.check`).
            try addPresentations(connection, in: part, grouping: grouping, into: &accumulator)
            try ConversionSource.forEachFromDerivedTables(connection, range: part, rules: rules) {
                accumulator.add($0, grouping: grouping, range: range)
            }
        }
    }

    private static func groupKey(
        _ grouping: ReportGrouping, day: Int64, affiliate: String?, campaign: String?, message: String?
    ) -> String? {
        switch grouping {
        case .affiliate: affiliate.flatMap { $0.isEmpty ? nil : $0 }
        case .campaign: campaign.flatMap { $0.isEmpty ? nil : $0 }
        case .message: message.flatMap { $0.isEmpty ? nil : $0 }
        case .day: Timestamp.formatDay(day * Timestamp.millisecondsPerDay)
        }
    }

    /// Adds the roll-up's conversions of whole days; returns the days whose amounts change within the day
    /// (a rule's `from` or `until` inside it) or whose conversions qualify only partly by the accumulator's
    /// `asOf`, which the caller reads row by row instead.
    private static func addConversionDays(
        _ connection: Connection, from firstDay: Int64, to endDay: Int64, grouping: ReportGrouping,
        rules: CommissionRules, into accumulator: inout ReportAccumulator
    ) throws -> [Int64] {
        let rows = try connection.prepare(
            """
            SELECT day, attributed, lapsed, review, affiliate_token, campaign_token, message_identifier, conversions
            FROM conversion_days WHERE day >= ?1 AND day < ?2 AND conversions != 0
            """)
        try rows.bind(firstDay, at: 1)
        try rows.bind(endDay, at: 2)
        defer { rows.reset() }
        var changingDays: Set<Int64> = []
        while try rows.step() {
            let day = rows.int64(0)
            let start = day * Timestamp.millisecondsPerDay
            let end = start + Timestamp.millisecondsPerDay
            // Every conversion of the day qualifies by `asOf` (the last instant's does), or none does.
            let allQualified = rules.settings.qualifiesAt(conversionAt: end - 1) <= accumulator.asOf
            let noneQualified = rules.settings.qualifiesAt(conversionAt: start) > accumulator.asOf
            guard rules.amountsAreConstant(from: start, until: end), allQualified || noneQualified else {
                changingDays.insert(day)
                continue
            }
            let attributed = rows.int64(1) == 1
            let affiliate = rows.text(4).flatMap { $0.isEmpty ? nil : $0 }
            let campaign = rows.text(5).flatMap { $0.isEmpty ? nil : $0 }
            let count = rows.int64(7)
            // The rule that sets the amount is the same all day (checked above): its amount and its hold.
            let rule =
                attributed
                ? affiliate.flatMap { rules.rule(affiliateToken: $0, campaignToken: campaign, at: start) } : nil
            let amount = rule?.amountMinor ?? 0
            var state: QualificationState?
            if attributed {
                let review = RecordColumnCodes.reviewDecision(code: rows.int64(3))
                state =
                    rows.int64(2) == 1
                    ? .lapsed
                    : AttributionRules.reviewedState(review: review, heldByRule: rule?.hold ?? false)
                        ?? (allQualified ? .qualified : .pending)
            }
            let key = groupKey(grouping, day: day, affiliate: affiliate, campaign: campaign, message: rows.text(6))
            accumulator.add(
                conversionKey: attributed || grouping == .day ? key : nil, state: state, amountMinor: amount,
                count: Int(count))
        }
        return changingDays.sorted()
    }

    private static func addPresentations(
        _ connection: Connection, in range: ReportRange, grouping: ReportGrouping,
        into accumulator: inout ReportAccumulator
    ) throws {
        // The offer is the presentation record's own; `join` is the message identifier's default.
        let key: String =
            switch grouping {
            case .affiliate: "r.affiliate_token"
            case .campaign: "r.campaign_token"
            case .message: "coalesce(r.message_identifier, 'join')"
            case .day: DayRollup.daySQL(of: "d.ts")
            }
        let presentations = try connection.prepare(
            """
            SELECT \(key), count(*), sum(d.eligible) FROM derived_presentations d JOIN records r ON r.seq = d.seq
            WHERE d.ts >= ?1 AND d.ts < ?2 GROUP BY 1
            """)
        try bind(range, to: presentations)
        defer { presentations.reset() }
        while try presentations.step() {
            let groupKey: String? =
                grouping == .day
                ? Timestamp.formatDay(presentations.int64(0) * Timestamp.millisecondsPerDay) : presentations.text(0)
            accumulator.merge(
                ReportRow(
                    key: groupKey, presented: Int(presentations.int64(1)),
                    presentedEligible: Int(presentations.int64(2))))
        }
    }

    /// Attribution recomputed from every user's records; presentations counted in `presentations` only (the range
    /// less the sealed days, whose presentations are the counts sealing kept).
    private static func recomputed(
        _ connection: Connection, grouping: ReportGrouping, range: ReportRange, presentations: ReportRange,
        rules: CommissionRules, into accumulator: inout ReportAccumulator
    ) throws {
        try RecordQueries.forEachUser(on: connection) { _, records in
            let attribution = Attribution.attribute(userRecords: records, settings: rules.settings)
            for presentation in attribution.presentations {
                accumulator.add(presentation, grouping: grouping, range: presentations)
            }
            if let conversion = attribution.conversion {
                accumulator.add(EvaluatedConversion(conversion, rules: rules), grouping: grouping, range: range)
            }
        }
    }

    static func bind(_ range: ReportRange, to statement: Statement) throws {
        try statement.bind(range.since ?? Int64.min, at: 1)
        try statement.bind(range.until ?? Int64.max, at: 2)
    }
}
