import JournalStore
import OfferTrackDomain
import SQLite

/// Pending changes to the daily roll-ups (`presentation_rollup`, `conversion_days`), netted in memory and written
/// with one upsert per touched group.
///
/// Presentations are rolled up per day along each grouping a report uses on its own (affiliate, campaign,
/// message; by day adds up one of them): a batch touches a few groups per dimension instead of one per
/// combination of all three. Conversions keep the whole combination, which their commission amounts depend on.
package struct DayRollup: Sendable {
    /// The grouping a `presentation_rollup` row counts under.
    enum Dimension: Int64, CaseIterable, Sendable {
        case affiliate = 0
        case campaign = 1
        case message = 2
    }

    /// A presentation group: one dimension's value ("" for an absent token) on one day.
    struct PresentationKey: Hashable, Sendable {
        var day: Int64
        var dimension: Dimension
        var value: ExactString
    }

    /// A conversion group (absent tokens as ""; unattributed conversions with no tokens; `lapsed` 1 for an
    /// attributed conversion that lapsed, rule 4.6; `review` the decision of an attributed conversion's review
    /// that did not lapse, rule 4.7: 0 none, else `RecordColumnCodes.reviewDecisionCode`).
    struct ConversionKey: Hashable, Sendable {
        var day: Int64
        var attributed: Int64
        var lapsed: Int64
        var review: Int64
        var affiliate: ExactString
        var campaign: ExactString
        var message: ExactString
    }

    /// SQL for the UTC day number of the `ts` column, floored like `day(of:)` (SQLite's `/` truncates).
    package static let daySQL = daySQL(of: "ts")

    /// SQL for the UTC day number of `column` (a time in epoch milliseconds).
    static func daySQL(of column: String) -> String {
        let day = Timestamp.millisecondsPerDay
        return "(\(column) - ((\(column) % \(day)) + \(day)) % \(day)) / \(day)"
    }

    /// The UTC day number of `ts` (floor division, so times before 1970 fall on the right day).
    static func day(of ts: Int64) -> Int64 {
        ts >= 0 ? ts / Timestamp.millisecondsPerDay : -((-ts - 1) / Timestamp.millisecondsPerDay) - 1
    }

    /// No changes.
    package init() {}

    private(set) var presentations: [PresentationKey: (presented: Int64, eligible: Int64)] = [:]
    private(set) var conversions: [ConversionKey: Int64] = [:]

    package mutating func count(_ fact: PresentationFact, sign: Int64) {
        let day = Self.day(of: fact.ts)
        let eligible = fact.eligible ? sign : 0
        let values = [
            (Dimension.affiliate, fact.offer.affiliateToken ?? ""), (.campaign, fact.offer.campaignToken ?? ""),
            (.message, fact.offer.effectiveMessageIdentifier),
        ]
        for (dimension, value) in values {
            let key = PresentationKey(day: day, dimension: dimension, value: ExactString(value))
            Self.add(presented: sign, eligible: eligible, to: &presentations[key, default: (0, 0)])
        }
    }

    /// The changes to sealed days' counts that presentations whose eligibility a merge changed make (SPEC 11, 12).
    package static func sealedCounts(following changes: [SealedFacts.EligibilityChange]) -> DayRollup {
        var rollup = DayRollup()
        for change in changes {
            var now = change.before
            now.eligible = change.eligibleNow
            rollup.count(change.before, sign: -1)
            rollup.count(now, sign: 1)
        }
        return rollup
    }

    /// One dictionary lookup for both counts.
    private static func add(presented: Int64, eligible: Int64, to counts: inout (presented: Int64, eligible: Int64)) {
        counts.presented += presented
        counts.eligible += eligible
    }

    mutating func count(_ conversion: Conversion, sign: Int64) {
        let none = ExactString("")
        var key = ConversionKey(
            day: Self.day(of: conversion.ts), attributed: 0, lapsed: 0, review: 0, affiliate: none, campaign: none,
            message: none)
        if conversion.status.isAttributed, let offer = conversion.presentation?.offer {
            key.attributed = 1
            key.lapsed = conversion.lapse == nil ? 0 : 1
            if conversion.lapse == nil, let review = conversion.review {
                key.review = RecordColumnCodes.reviewDecisionCode(review.decision)
            }
            key.affiliate = ExactString(offer.affiliateToken ?? "")
            key.campaign = ExactString(offer.campaignToken ?? "")
            key.message = ExactString(offer.effectiveMessageIdentifier)
        }
        conversions[key, default: 0] += sign
    }

    /// Adds another set of pending changes to these.
    mutating func add(_ other: DayRollup) {
        for (key, delta) in other.presentations {
            Self.add(presented: delta.presented, eligible: delta.eligible, to: &presentations[key, default: (0, 0)])
        }
        for (key, delta) in other.conversions { conversions[key, default: 0] += delta }
    }

    /// Where a day's presentation counts are: the roll-up of the derived tables, or (days sealed, SPEC 12) the
    /// counts sealing kept, which have the same columns.
    package enum PresentationTable: String, Sendable {
        case live = "presentation_rollup"
        case sealed = "sealed_presentations"
    }

    /// Adds the netted changes to the roll-up tables (the presentations' to `presentationTable`).
    package func write(on connection: Connection, presentationTable: PresentationTable = .live) throws {
        if !presentations.isEmpty {
            let upsert = try connection.prepare(
                static: presentationTable == .live
                    ? """
                    INSERT INTO presentation_rollup (day, dimension, value, presented, eligible)
                    VALUES (?1, ?2, ?3, ?4, ?5)
                    ON CONFLICT DO UPDATE SET presented = presented + excluded.presented,
                        eligible = eligible + excluded.eligible
                    """
                    : """
                    INSERT INTO sealed_presentations (day, dimension, value, presented, eligible)
                    VALUES (?1, ?2, ?3, ?4, ?5)
                    ON CONFLICT DO UPDATE SET presented = presented + excluded.presented,
                        eligible = eligible + excluded.eligible
                    """)
            for (key, delta) in presentations where delta.presented != 0 || delta.eligible != 0 {
                try upsert.bind(key.day, at: 1)
                try upsert.bind(key.dimension.rawValue, at: 2)
                try upsert.bind(key.value.value, at: 3)
                try upsert.bind(delta.presented, at: 4)
                try upsert.bind(delta.eligible, at: 5)
                try upsert.run()
            }
        }
        if !conversions.isEmpty {
            let upsert = try connection.prepare(
                static: """
                    INSERT INTO conversion_days (day, attributed, lapsed, review, affiliate_token, campaign_token,
                        message_identifier, conversions) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                    ON CONFLICT DO UPDATE SET conversions = conversions + excluded.conversions
                    """)
            for (key, delta) in conversions where delta != 0 {
                try upsert.bind(key.day, at: 1)
                try upsert.bind(key.attributed, at: 2)
                try upsert.bind(key.lapsed, at: 3)
                try upsert.bind(key.review, at: 4)
                try upsert.bind(key.affiliate.value, at: 5)
                try upsert.bind(key.campaign.value, at: 6)
                try upsert.bind(key.message.value, at: 7)
                try upsert.bind(delta, at: 8)
                try upsert.run()
            }
        }
    }

    /// Adds the presentations counted in `table` on the days `[firstDay, endDay)` to a report grouped by
    /// `grouping`.
    static func addPresentationDays(
        _ connection: Connection, table: PresentationTable, from firstDay: Int64, to endDay: Int64,
        grouping: ReportGrouping, into accumulator: inout ReportAccumulator
    ) throws {
        guard firstDay < endDay else { return }
        // By day: every presentation counts once along each dimension, so any one of them adds up the day.
        let dimension: Dimension =
            switch grouping {
            case .affiliate, .day: .affiliate
            case .campaign: .campaign
            case .message: .message
            }
        let rows = try connection.prepare(
            """
            SELECT day, value, presented, eligible FROM \(table.rawValue)
            WHERE day >= ?1 AND day < ?2 AND dimension = ?3 AND presented != 0
            """)
        try rows.bind(firstDay, at: 1)
        try rows.bind(endDay, at: 2)
        try rows.bind(dimension.rawValue, at: 3)
        defer { rows.reset() }
        while try rows.step() {
            let value = rows.text(1).flatMap { $0.isEmpty ? nil : $0 }
            let key = grouping == .day ? Timestamp.formatDay(rows.int64(0) * Timestamp.millisecondsPerDay) : value
            accumulator.merge(ReportRow(key: key, presented: Int(rows.int64(2)), presentedEligible: Int(rows.int64(3))))
        }
    }

    /// SQL giving `presentation_rollup`'s rows (`day, dimension, value, presented, eligible`) from the derived
    /// presentations and their records (by `seq`), for `verify`.
    package static let presentationRollupFromRows = """
        SELECT \(daySQL(of: "d.ts")), 0, coalesce(r.affiliate_token, ''), count(*), sum(d.eligible)
            FROM derived_presentations d JOIN records r ON r.seq = d.seq GROUP BY 1, 3
        UNION ALL SELECT \(daySQL(of: "d.ts")), 1, coalesce(r.campaign_token, ''), count(*), sum(d.eligible)
            FROM derived_presentations d JOIN records r ON r.seq = d.seq GROUP BY 1, 3
        UNION ALL SELECT \(daySQL(of: "d.ts")), 2, coalesce(r.message_identifier, 'join'), count(*), sum(d.eligible)
            FROM derived_presentations d JOIN records r ON r.seq = d.seq GROUP BY 1, 3
        """
}
