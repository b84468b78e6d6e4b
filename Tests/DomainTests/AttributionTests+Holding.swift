import OfferTrackDomain
import Simulator
import Testing

/// SPEC rule 4.6: the holding period.
extension AttributionTests {
    static let holding = 1080 * A.hour

    /// An attributed conversion at `t = 100 h` (check at 0, presentation at 1 ms), then `later`: attributed from
    /// the records as listed, and from eight seeded shuffles of them that must give the same result (the seed is in
    /// the failure, to replay the order).
    static func held(
        _ later: [Record], holding: Int64 = holding, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Conversion? {
        let records = [A.check("c0", 0), A.presented("p", 1), A.outcome("o", 100 * A.hour)] + later
        let settings = AttributionSettings(windowMs: A.window, freshnessMs: A.freshness, holdingMs: holding)
        let listed = Attribution.attribute(userRecords: records, settings: settings)
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = SimulationRandom(seed: seed)
        for _ in 0..<8 {
            let order = records.shuffled(using: &generator)
            #expect(
                Attribution.attribute(userRecords: order, settings: settings) == listed,
                "the order \(order.map(\.id)) changed the attribution (seed \(seed))", sourceLocation: sourceLocation)
        }
        return listed.conversion
    }

    static let t = 100 * A.hour

    @Test(
        arguments: [
            // a lapse at t exactly is not after the conversion
            (t, nil), (t + 1, "l"), (t + holding, "l"),
            // one millisecond past t + H it is too late to void anything
            (t + holding + 1, nil), (t - 1, nil),
        ] as [(Int64, String?)])
    func lapseWindowIsAfterTUpToTPlusH(at: Int64, lapse: String?) {
        let conversion = Self.held([A.check("l", at, .eligible)])
        #expect(conversion?.status == .attributed)
        #expect(conversion?.lapse?.id == lapse)
        #expect(conversion?.lapse.map { $0.ts - A.t0 } == (lapse == nil ? nil : at))
    }

    @Test(arguments: [
        // capabilities without playback, in every form the validator derives: eligible and ineligible
        (RecordBody.capabilities(.eligible), true), (.capabilities(.ineligible), true),
        // a declined outcome, given or derived from capabilities without playback
        (.outcome(subscribed: false, decision: nil, offerId: nil), true),
        (.outcome(subscribed: false, decision: .eligible, offerId: nil), true),
        (.outcome(subscribed: false, decision: .ineligible, offerId: "p"), true),
        // not lapses: unauthorized checks, checks with playback, repeat subscribed outcomes, presentations
        (.capabilities(.unauthorized), false), (.capabilities(.subscriber), false),
        (.outcome(subscribed: true, decision: nil, offerId: nil), false),
        (.outcome(subscribed: true, decision: .subscriber, offerId: "p"), false),
        (
            .presented(
                Offer(affiliateToken: "a", campaignToken: nil, messageIdentifier: nil, itemID: nil), loaded: true),
            false
        ),
    ])
    func lapseRecordKinds(body: RecordBody, lapses: Bool) {
        let record = Record(id: "l", ts: A.t0 + Self.t + A.hour, user: "u1", body: body)
        #expect(AttributionRules.isLapse(record.body) == lapses)
        #expect(Self.held([record])?.lapse?.id == (lapses ? "l" : nil))
    }

    @Test func anotherUsersRecordIsNoLapse() {
        // Attribution sees one user's records; grouping by user keeps another user's check out.
        let other = A.check("l", Self.t + A.hour, .eligible, user: "u2")
        let records = [A.check("c0", 0), A.presented("p", 1), A.outcome("o", Self.t)]
        let byUser = Dictionary(grouping: records + [other], by: \.user)
        let conversion = Self.attribute(byUser["u1"] ?? []).conversion
        #expect(conversion?.status == .attributed && conversion?.lapse == nil)
    }

    @Test func aRecordBeforeTheConversionIsNoLapse() {
        // The eligibility check itself (and a declined outcome before subscribing) come before t.
        let conversion = Self.held([A.outcome("d", Self.t - A.hour, subscribed: false)])
        #expect(conversion?.status == .attributed && conversion?.lapse == nil)
    }

    @Test func theFirstLapseInTsThenIdOrderIsNamed() {
        let at = Self.t + 5 * A.hour
        let conversion = Self.held([
            A.check("zz", at, .ineligible), A.outcome("m", at, subscribed: false), A.check("later", at + 1),
        ])
        #expect(conversion?.lapse == RecordReference(id: "m", ts: A.t0 + at))
        // A lapse in the same millisecond as the conversion does not count, even with a larger id.
        let same = Self.held([A.check("zzz", Self.t, .eligible), A.check("y", Self.t + 2, .eligible)])
        #expect(same?.lapse?.id == "y")
    }

    @Test func withHZeroNothingLapses() {
        let conversion = Self.held([A.check("l", Self.t + 1, .eligible)], holding: 0)
        #expect(conversion?.status == .attributed && conversion?.lapse == nil)
    }

    @Test func onlyAttributedConversionsLapse() {
        // No eligibility check: unattributed, and a later lapse record names nothing.
        let records = [A.presented("p", 1), A.outcome("o", Self.t), A.check("l", Self.t + 1, .eligible)]
        let conversion = Attribution.attribute(
            userRecords: records,
            settings: AttributionSettings(windowMs: A.window, freshnessMs: A.freshness, holdingMs: Self.holding)
        ).conversion
        #expect(conversion?.status == .unattributed(.eligibilityUnknown) && conversion?.lapse == nil)
    }

    @Test(arguments: [
        (Int64(0), QualificationState.pending), (holding - 1, .pending), (holding, .qualified),
        (holding + 1, .qualified),
    ])
    func pendingUntilTPlusHThenQualified(after: Int64, state: QualificationState) throws {
        let rules = CommissionRules(
            currency: "USD",
            settings: AttributionSettings(windowMs: A.window, freshnessMs: A.freshness, holdingMs: Self.holding),
            rules: [CommissionRule(affiliateToken: "*", campaignToken: nil, amountMinor: 500, from: nil, until: nil)])
        let conversion = try #require(Self.held([]))
        let evaluated = EvaluatedConversion(conversion, rules: rules)
        #expect(evaluated.qualifiesAt == A.t0 + Self.t + Self.holding)
        #expect(evaluated.state(asOf: A.t0 + Self.t + after) == state)
        let lapsed = EvaluatedConversion(try #require(Self.held([A.check("l", Self.t + 1)])), rules: rules)
        #expect(lapsed.state(asOf: A.t0 + Self.t + after) == .lapsed)
        #expect(lapsed.commission.amountMinor == 500)
        #expect(CommissionRow(lapsed, currency: "USD") == nil)
        #expect(CommissionRow(evaluated, currency: "USD")?.amountMinor == 500)
    }
}
