import OfferTrackDomain
import Testing

/// Rule 4.7 and its report columns, cases computed by hand from the SPEC. Times are offsets from `t0`
/// (2026-11-01T00:00:00Z); the holding period is 10 h, so the conversion at 20 h qualifies at 30 h.
@Suite struct ReviewTests {
    typealias A = AttributionRecords
    static let hour = A.hour
    static let holding = 10 * hour
    /// `*` pays 500; `held` pays 300 and holds every conversion whose amount it sets.
    static let rules = CommissionRules(
        currency: "USD",
        settings: AttributionSettings(windowMs: A.window, freshnessMs: A.freshness, holdingMs: holding),
        rules: [
            CommissionRule(affiliateToken: "*", campaignToken: nil, amountMinor: 500, from: nil, until: nil),
            CommissionRule(
                affiliateToken: "held", campaignToken: nil, amountMinor: 300, from: nil, until: nil, hold: true),
        ])

    static func review(
        _ id: String, _ at: Int64, _ decision: ReviewDecision, _ reason: ReviewReason? = .fraud,
        conversion: String = "o", user: String = "u1"
    ) -> Record {
        Record(
            id: id, ts: A.t0 + at, user: user,
            body: .review(Review(conversion: conversion, decision: decision, reason: reason, note: nil)))
    }

    /// Checked at 0, shown at 10 h, converted at 20 h: attributed.
    static func converted(affiliate: String = "1010lKxy") -> [Record] {
        [A.check("c", 0), A.presented("p", 10 * hour, affiliate: affiliate), A.outcome("o", 20 * hour)]
    }

    static func evaluate(_ records: [Record]) -> EvaluatedConversion? {
        Attribution.attribute(userRecords: records, settings: rules.settings).conversion.map {
            EvaluatedConversion($0, rules: rules)
        }
    }

    /// One row: the reviews (and other records) added to `converted()`, the state seen at `asOf` and the id of the
    /// review rule 4.7 picks.
    struct Row: Sendable, CustomTestStringConvertible {
        var note: String
        var added: [Record]
        var affiliate = "1010lKxy"
        var asOf: Int64 = 100 * 3_600_000
        var state: QualificationState?
        var review: String?
        var testDescription: String { note }
    }

    static let rows: [Row] = [
        Row(note: "no review: qualified", added: [], state: .qualified, review: nil),
        Row(note: "void", added: [review("r1", 30 * hour, .void)], state: .voided, review: "r1"),
        Row(note: "hold", added: [review("r1", 30 * hour, .hold, .refund)], state: .held, review: "r1"),
        Row(
            note: "release alone: as if never reviewed", added: [review("r1", 30 * hour, .release, nil)],
            state: .qualified, review: "r1"),
        Row(
            note: "void then release: the release is latest",
            added: [review("r1", 30 * hour, .void), review("r2", 40 * hour, .release, nil)], state: .qualified,
            review: "r2"),
        Row(
            note: "release then void", added: [review("r1", 30 * hour, .release, nil), review("r2", 40 * hour, .void)],
            state: .voided, review: "r2"),
        Row(
            note: "latest by ts, not by arrival or id",
            added: [review("r9", 40 * hour, .hold, .policy), review("r1", 30 * hour, .void)], state: .held,
            review: "r9"),
        Row(
            note: "a review before the conversion still applies", added: [review("r1", 5 * hour, .void)],
            state: .voided, review: "r1"),
        Row(
            note: "a review far in the future applies whenever it is seen", added: [review("r1", 90_000 * hour, .void)],
            asOf: 25 * hour, state: .voided, review: "r1"),
        Row(
            note: "equal ts: the larger id is later (release wins)",
            added: [review("r-a", 30 * hour, .void), review("r-b", 30 * hour, .release, nil)], state: .qualified,
            review: "r-b"),
        Row(
            note: "equal ts: the larger id is later (void wins)",
            added: [review("r-b", 30 * hour, .void), review("r-a", 30 * hour, .release, nil)], state: .voided,
            review: "r-b"),
        Row(
            note: "ids compare by bytes: Z (0x5A) before a (0x61)",
            added: [review("a", 30 * hour, .void), review("Z", 30 * hour, .release, nil)], state: .voided, review: "a"),
        Row(
            note: "a review naming the presentation changes nothing",
            added: [review("r1", 30 * hour, .void, conversion: "p")], state: .qualified, review: nil),
        Row(
            note: "a review naming a repeat changes nothing",
            added: [A.outcome("o2", 50 * hour), review("r1", 60 * hour, .void, conversion: "o2")], state: .qualified,
            review: nil),
        Row(
            note: "a review naming another user's conversion changes nothing",
            added: [review("r1", 30 * hour, .void, conversion: "other-o")], state: .qualified, review: nil),
        Row(
            note: "lapse wins over void", added: [A.check("l", 25 * hour), review("r1", 30 * hour, .void)],
            state: .lapsed, review: "r1"),
        Row(
            note: "lapse wins over hold", added: [A.check("l", 25 * hour), review("r1", 30 * hour, .hold)],
            state: .lapsed, review: "r1"),
        Row(
            note: "held, not pending, before it qualifies", added: [review("r1", 21 * hour, .hold)],
            asOf: 25 * hour, state: .held, review: "r1"),
        Row(
            note: "released before it qualifies: pending",
            added: [review("r1", 21 * hour, .hold), review("r2", 22 * hour, .release, nil)], asOf: 25 * hour,
            state: .pending, review: "r2"),
        Row(note: "rule hold", added: [], affiliate: "held", state: .held, review: nil),
        Row(
            note: "rule hold released", added: [review("r1", 30 * hour, .release, nil)], affiliate: "held",
            state: .qualified, review: "r1"),
        Row(
            note: "rule hold voided", added: [review("r1", 30 * hour, .void, .refund)], affiliate: "held",
            state: .voided, review: "r1"),
        Row(
            note: "rule hold held by review too", added: [review("r1", 30 * hour, .hold, .test)], affiliate: "held",
            state: .held, review: "r1"),
        Row(
            note: "rule hold, released, then held again",
            added: [review("r1", 30 * hour, .release, nil), review("r2", 31 * hour, .hold, .other)],
            affiliate: "held", state: .held, review: "r2"),
        Row(
            note: "rule hold lapses like any other", added: [A.check("l", 25 * hour)], affiliate: "held",
            state: .lapsed, review: nil),
    ]

    @Test(arguments: rows) func ruleSeven(_ row: Row) throws {
        // Every order of arrival gives the same result (SPEC 4): forwards and backwards.
        let records = Self.converted(affiliate: row.affiliate) + row.added
        for ordering in [records, records.reversed()] {
            let evaluated = try #require(Self.evaluate(ordering))
            #expect(evaluated.state(asOf: A.t0 + row.asOf) == row.state)
            #expect(evaluated.conversion.review?.record.id == row.review)
        }
    }

    @Test func anUnattributedConversionIsNotAffectedButNamesItsReview() throws {
        // No presentation: unattributed (no_presentation); the void is named, the state stays nil.
        let records = [A.check("c", 0), A.outcome("o", 20 * Self.hour), Self.review("r1", 30 * Self.hour, .void)]
        let evaluated = try #require(Self.evaluate(records))
        #expect(evaluated.conversion.status == .unattributed(.noPresentation))
        #expect(evaluated.state(asOf: .max) == nil)
        #expect(evaluated.conversion.review?.decision == .void)
        let explanation = Explanation(user: "u1", userRecords: records, rules: Self.rules, asOf: .max)
        #expect(explanation.review?.record.id == "r1" && explanation.state == nil)
    }

    @Test func aReviewByAnotherUserIsNotTheirs() throws {
        // The same conversion id named by a review of user u2: u2's records hold it, u1's do not.
        let other = Self.review("r1", 30 * Self.hour, .void, user: "u2")
        #expect(Attribution.attribute(userRecords: [other], settings: Self.rules.settings).conversion == nil)
        #expect(try #require(Self.evaluate(Self.converted())).state(asOf: .max) == .qualified)
    }

    @Test func explanationNamesTheNoteAndTheHoldingRule() throws {
        var records = Self.converted(affiliate: "held")
        let held = Explanation(user: "u1", userRecords: records, rules: Self.rules, asOf: .max)
        #expect(held.state == .held && held.heldByRule && held.rule == 1 && held.review == nil)
        records.append(
            Record(
                id: "r1", ts: A.t0 + 30 * Self.hour, user: "u1",
                body: .review(Review(conversion: "o", decision: .release, reason: nil, note: "checked by finance"))))
        let released = Explanation(user: "u1", userRecords: records, rules: Self.rules, asOf: .max)
        #expect(released.state == .qualified && released.reviewNote == "checked by finance")
    }

    /// The report's columns: voided and held count among the attributed; only qualified money is commission.
    @Test func reportCountsVoidedAndHeldApart() throws {
        let conversions = [
            Self.converted(),  // qualified 500
            Self.converted() + [Self.review("r1", 30 * Self.hour, .void)],  // voided
            Self.converted() + [Self.review("r1", 30 * Self.hour, .hold)],  // held 500
            Self.converted(affiliate: "held"),  // held 300 by its rule
            Self.converted() + [A.check("l", 25 * Self.hour), Self.review("r1", 30 * Self.hour, .hold)],  // lapsed
        ].compactMap(Self.evaluate)
        let rows = try ReportAccumulator.build(
            presentations: [], conversions: conversions, grouping: .affiliate, asOf: A.t0 + 100 * Self.hour)
        #expect(rows.map(\.key) == ["1010lKxy", "held"])
        let main = try #require(rows.first)
        #expect(
            [main.conversions, main.attributed, main.lapsed, main.voided, main.held, main.pending, main.qualified]
                == [4, 4, 1, 1, 1, 0, 1])
        #expect([main.commissionMinor, main.pendingCommissionMinor, main.heldCommissionMinor] == [500, 0, 500])
        #expect(rows.last?.held == 1 && rows.last?.heldCommissionMinor == 300 && rows.last?.commissionMinor == 0)
    }

    /// Exports: a voided or held conversion has no row; a released one has.
    @Test func exportRowsLeaveOutVoidedAndHeld() throws {
        func row(_ added: [Record], affiliate: String = "1010lKxy") throws -> CommissionRow? {
            CommissionRow(try #require(Self.evaluate(Self.converted(affiliate: affiliate) + added)), currency: "USD")
        }
        #expect(try row([])?.amountMinor == 500)
        #expect(try row([Self.review("r1", 30 * Self.hour, .void)]) == nil)
        #expect(try row([Self.review("r1", 30 * Self.hour, .hold)]) == nil)
        #expect(try row([], affiliate: "held") == nil)
        #expect(try row([Self.review("r1", 30 * Self.hour, .release, nil)], affiliate: "held")?.amountMinor == 300)
    }

    @Test func sumsOfMoneyThatOverflowAreReportedNotWrapped() {
        var accumulator = ReportAccumulator()
        accumulator.add(conversionKey: "k", state: .qualified, amountMinor: Int64.max / 2 + 1)
        accumulator.add(conversionKey: "k", state: .qualified, amountMinor: Int64.max / 2 + 1)
        #expect(throws: MoneyOverflow.self) { try accumulator.rows() }
        #expect(throws: MoneyOverflow.self) { try Money.product(1_000_000_000_000, 9_300_000) }
        #expect(throws: MoneyOverflow.self) { try Money.total([Int64.max, 1]) }
        #expect((try? Money.total([Int64.max, -1, 1])) == Int64.max)
    }
}
