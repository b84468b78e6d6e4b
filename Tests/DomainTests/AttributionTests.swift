import OfferTrackDomain
import Testing

/// SPEC section 4, cases computed by hand. Times are offsets from `t0` (2026-11-01T00:00:00Z).
@Suite struct AttributionTests {
    typealias A = AttributionRecords

    // MARK: Fixtures

    static func attribute(_ records: [Record]) -> UserAttribution {
        Attribution.attribute(userRecords: records, settings: .defaults)
    }

    static func status(_ records: [Record]) -> ConversionStatus? {
        attribute(records).conversion?.status
    }

    static func candidate(_ records: [Record]) -> String? {
        attribute(records).conversion?.presentation?.id
    }

    // MARK: Rules 4.1–4.4

    @Test func specExampleIsAttributed() {
        let result = Self.attribute([
            A.check("01JDX3K7Q8A1", 0),
            A.presented("01JDX3K9M2B1", 1_880, campaign: "spring26"),
            A.outcome("01JDX3M1C4D1", 1_880 + 161_000, offerId: "01JDX3K9M2B1"),
        ])
        #expect(result.conversion?.status == .attributed)
        #expect(result.conversion?.id == "01JDX3M1C4D1")
        #expect(result.conversion?.ts == A.t0 + 162_880)
        #expect(result.conversion?.presentation?.id == "01JDX3K9M2B1")
        #expect(result.conversion?.presentation?.offer.campaignToken == "spring26")
        #expect(result.presentations.map(\.eligible) == [true])
    }

    @Test func conversionExactlyWAfterPresentationIsAttributed() {
        let records = [A.check("c", 0), A.presented("p", 0 + 1), A.outcome("o", 1 + A.window)]
        #expect(Self.status(records) == .attributed)
    }

    @Test func conversionOneMillisecondPastWIsOutsideWindow() {
        let records = [A.check("c", 0), A.presented("p", 1), A.outcome("o", 1 + A.window + 1)]
        #expect(Self.status(records) == .unattributed(.outsideWindow))
        #expect(Self.candidate(records) == "p")
    }

    @Test func checkExactlyFOldIsFresh() {
        let records = [A.check("c", 0), A.presented("p", A.freshness), A.outcome("o", A.freshness + 5)]
        #expect(Self.status(records) == .attributed)
        #expect(Self.attribute(records).presentations.first?.eligible == true)
    }

    @Test func checkOneMillisecondOlderThanFIsUnknown() {
        let records = [
            A.check("c", 0), A.presented("p", A.freshness + 1), A.outcome("o", A.freshness + 5),
        ]
        #expect(Self.status(records) == .unattributed(.eligibilityUnknown))
        #expect(Self.attribute(records).presentations.first?.eligible == false)
    }

    @Test func windowAndFreshnessComeFromSettings() {
        let records = [A.check("c", 0), A.presented("p", 10), A.outcome("o", 20)]
        let tight = AttributionSettings(windowMs: 9, freshnessMs: 10)
        #expect(
            Attribution.attribute(userRecords: records, settings: tight).conversion?.status
                == .unattributed(.outsideWindow))
        let stale = AttributionSettings(windowMs: 10, freshnessMs: 9)
        #expect(
            Attribution.attribute(userRecords: records, settings: stale).conversion?.status
                == .unattributed(.eligibilityUnknown))
    }

    @Test func checkWithSameTsAndSmallerIdIsBeforePresentation() {
        let records = [A.check("A1", 100), A.presented("A2", 100), A.outcome("Z", 200)]
        #expect(Self.status(records) == .attributed)
    }

    @Test func checkWithSameTsAndLargerIdIsAfterPresentation() {
        let records = [A.check("A2", 100), A.presented("A1", 100), A.outcome("Z", 200)]
        #expect(Self.status(records) == .unattributed(.eligibilityUnknown))
    }

    @Test func presentationWithSameTsAndSmallerIdIsBeforeConversion() {
        let records = [A.check("c", 0), A.presented("P1", 500), A.outcome("P2", 500)]
        #expect(Self.status(records) == .attributed)
        #expect(Self.candidate(records) == "P1")
    }

    @Test func presentationWithSameTsAndLargerIdIsAfterConversion() {
        let records = [A.check("c", 0), A.presented("P3", 500), A.outcome("P2", 500)]
        #expect(Self.status(records) == .unattributed(.noPresentation))
        #expect(Self.candidate(records) == nil)
    }

    @Test func idsCompareByBytesUppercaseBeforeLowercase() {
        // "Z" (0x5A) sorts before "a" (0x61): the check "Z" is before the presentation "a" at the same ts.
        let records = [A.check("Z", 100), A.presented("a", 100), A.outcome("o", 200)]
        #expect(Self.status(records) == .attributed)
        let reversed = [A.check("a", 100), A.presented("Z", 100), A.outcome("o", 200)]
        #expect(Self.status(reversed) == .unattributed(.eligibilityUnknown))
    }

    @Test func offerIdNamingAnEarlierPresentationMakesItTheCandidate() {
        let records = [
            A.check("c1", 0), A.presented("p1", 1, affiliate: "first"),
            A.check("c2", 2, .ineligible), A.presented("p2", 3, affiliate: "second"),
            A.outcome("o", 4, offerId: "p1"),
        ]
        #expect(Self.candidate(records) == "p1")
        #expect(Self.status(records) == .attributed)
        let unnamed = Array(records.dropLast()) + [A.outcome("o", 4)]
        #expect(Self.candidate(unnamed) == "p2")
        #expect(Self.status(unnamed) == .unattributed(.notEligible))
    }

    @Test func offerIdNamingALaterPresentationFallsBackToLatestLoadedBefore() {
        let records = [
            A.check("c", 0), A.presented("p1", 10), A.presented("p2", 20),
            A.outcome("o", 30, offerId: "p3"), A.presented("p3", 40),
        ]
        #expect(Self.candidate(records) == "p2")
        #expect(Self.status(records) == .attributed)
    }

    @Test func offerIdNamingAnUnloadedPresentationFallsBack() {
        let records = [
            A.check("c", 0), A.presented("p1", 10), A.presented("p2", 20, loaded: false),
            A.outcome("o", 30, offerId: "p2"),
        ]
        #expect(Self.candidate(records) == "p1")
        #expect(Self.attribute(records).presentations.map(\.id) == ["p1"])
    }

    @Test func offerIdNamingAnotherUsersPresentationFallsBack() {
        // The journal holds both users; attribution runs per user, as every caller groups records by user.
        let journal = [
            A.check("c1", 0), A.presented("p1", 10, affiliate: "mine"),
            A.check("c2", 0, user: "u2"), A.presented("p2", 20, affiliate: "theirs", user: "u2"),
            A.outcome("o", 30, offerId: "p2"),
        ]
        let byUser = Dictionary(grouping: journal, by: \.user)
        let mine = Attribution.attribute(userRecords: byUser["u1"] ?? [], settings: .defaults)
        #expect(mine.conversion?.presentation?.id == "p1")
        #expect(mine.conversion?.status == .attributed)
        let theirs = Attribution.attribute(userRecords: byUser["u2"] ?? [], settings: .defaults)
        #expect(theirs.conversion == nil)
        #expect(theirs.presentations.map(\.id) == ["p2"])
    }

    @Test func offerIdNamingACapabilitiesRecordFallsBack() {
        let records = [A.check("c", 0), A.presented("p1", 10), A.outcome("o", 30, offerId: "c")]
        #expect(Self.candidate(records) == "p1")
    }

    @Test func repeatSubscribedOutcomesEarnNothing() {
        let records = [
            A.check("c", 0), A.presented("p1", 10), A.outcome("o1", 20),
            A.presented("p2", 30), A.outcome("o2", 40, offerId: "p2"), A.outcome("o3", 50),
        ]
        let result = Self.attribute(records)
        #expect(result.conversion?.id == "o1")
        #expect(result.conversion?.presentation?.id == "p1")
        #expect(result.presentations.map(\.id) == ["p1", "p2"])
    }

    @Test func declinedBeforeSubscribedIsNotTheConversion() {
        let records = [
            A.check("c", 0), A.presented("p1", 10), A.outcome("o1", 20, subscribed: false),
            A.outcome("o2", 30_000),
        ]
        #expect(Self.attribute(records).conversion?.id == "o2")
        #expect(Self.status(records) == .attributed)
    }

    @Test func onlyDeclinedMeansNoConversion() {
        let records = [A.check("c", 0), A.presented("p1", 10), A.outcome("o1", 20, subscribed: false)]
        #expect(Self.attribute(records).conversion == nil)
    }

    @Test(arguments: [EligibilityDecision.subscriber, .ineligible, .unauthorized])
    func otherFreshDecisionsAreNotEligible(decision: EligibilityDecision) {
        let records = [A.check("c", 0, decision), A.presented("p", 10), A.outcome("o", 20)]
        #expect(Self.status(records) == .unattributed(.notEligible))
        #expect(Self.attribute(records).presentations.first?.eligible == false)
    }

    @Test func latestCheckDecidesEvenWhenAnEarlierOneWasEligible() {
        let records = [
            A.check("c1", 0), A.check("c2", 5, .subscriber), A.presented("p", 10), A.outcome("o", 20),
        ]
        #expect(Self.status(records) == .unattributed(.notEligible))
    }

    @Test func checksAfterThePresentationDoNotCount() {
        let records = [A.presented("p", 10), A.check("c", 11), A.outcome("o", 20)]
        #expect(Self.status(records) == .unattributed(.eligibilityUnknown))
    }

    @Test func outcomeCapabilitiesAreNotAnEligibilityCheck() {
        let records = [
            A.presented("p", 10), A.outcome("o1", 15, subscribed: false, decision: .eligible),
            A.outcome("o2", 20, decision: .subscriber),
        ]
        #expect(Self.status(records) == .unattributed(.eligibilityUnknown))
    }

    @Test func noPresentationAtAll() {
        let records = [A.check("c", 0), A.outcome("o", 20)]
        #expect(Self.status(records) == .unattributed(.noPresentation))
        #expect(Self.attribute(records).conversion?.presentation == nil)
    }

    @Test func onlyUnloadedPresentationsMeanNoPresentation() {
        let records = [A.check("c", 0), A.presented("p", 10, loaded: false), A.outcome("o", 20)]
        #expect(Self.status(records) == .unattributed(.noPresentation))
        #expect(Self.attribute(records).presentations.isEmpty)
    }

    @Test func windowIsCheckedBeforeEligibility() {
        let records = [A.presented("p", 0), A.outcome("o", A.window + 1)]
        #expect(Self.status(records) == .unattributed(.outsideWindow))
    }

    @Test func presentationFactsCarryEachPresentationsOwnCheck() {
        let records = [
            A.check("c1", 0), A.presented("p1", 10), A.check("c2", 20, .ineligible),
            A.presented("p2", 30), A.presented("p3", 30 + A.freshness + 1),
            A.check("c3", 40 + A.freshness), A.presented("p4", 50 + A.freshness, loaded: false),
            A.presented("p5", 60 + A.freshness),
        ]
        let facts = Self.attribute(records).presentations
        #expect(facts.map(\.id) == ["p1", "p2", "p3", "p5"])
        #expect(facts.map(\.eligible) == [true, false, false, true])
        #expect(Self.attribute(records).conversion == nil)
    }

    // MARK: Rule 4.5

    static let rules = CommissionRules(
        currency: "USD",
        settings: .defaults,
        rules: [CommissionRule(affiliateToken: "1010lKxy", campaignToken: nil, amountMinor: 700, from: nil, until: nil)]
    )

    static func commission(_ records: [Record]) -> Commission? {
        Self.attribute(records).conversion.map { Commission.evaluate($0, rules: rules) }
    }

    @Test func matchingRuleSetsTheAmount() {
        let records = [A.check("c", 0), A.presented("p", 10), A.outcome("o", 20)]
        #expect(Self.commission(records) == Commission(amountMinor: 700, reason: nil, rule: 0, heldByRule: false))
    }

    @Test func noAffiliateTokenEarnsNothing() {
        let records = [A.check("c", 0), A.presented("p", 10, affiliate: nil), A.outcome("o", 20)]
        #expect(Self.status(records) == .attributed)
        #expect(Self.commission(records) == Commission(amountMinor: 0, reason: .noAffiliate))
    }

    @Test func noMatchingRuleEarnsNothing() {
        let records = [A.check("c", 0), A.presented("p", 10, affiliate: "other"), A.outcome("o", 20)]
        #expect(Self.status(records) == .attributed)
        #expect(Self.commission(records) == Commission(amountMinor: 0, reason: .noRule))
    }

    @Test func unattributedEarnsNothingWithItsReason() {
        let records = [A.check("c", 0, .subscriber), A.presented("p", 10), A.outcome("o", 20)]
        #expect(Self.commission(records) == Commission(amountMinor: 0, reason: .notEligible))
        #expect(CommissionReason.notEligible.rawValue == "not_eligible")
        #expect(
            UnattributedReason.allCases.map(\.rawValue) == [
                "shared_user", "no_presentation", "outside_window", "eligibility_unknown", "not_eligible",
            ])
    }

    // MARK: Order independence

    @Test func everyInputOrderGivesTheSameResult() {
        let records = [
            A.check("c1", 0, .ineligible), A.check("c2", 100), A.presented("p1", 100),
            A.presented("p2", 200, affiliate: "x", loaded: false), A.outcome("o1", 300, subscribed: false),
            A.outcome("o2", 300, offerId: "p1"), A.outcome("o3", 400),
        ]
        let expected = Self.attribute(records)
        #expect(expected.conversion?.id == "o2")
        #expect(expected.conversion?.status == .attributed)
        var count = 0
        Self.forEachPermutation(records) { permutation in
            count += 1
            #expect(Self.attribute(permutation) == expected)
        }
        #expect(count == 5_040)
    }

    /// Heap's algorithm.
    static func forEachPermutation(_ items: [Record], _ body: ([Record]) -> Void) {
        var items = items
        var c = [Int](repeating: 0, count: items.count)
        body(items)
        var i = 0
        while i < items.count {
            if c[i] < i {
                items.swapAt(i % 2 == 0 ? 0 : c[i], i)
                body(items)
                c[i] += 1
                i = 0
            } else {
                c[i] = 0
                i += 1
            }
        }
    }
}
