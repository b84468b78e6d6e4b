import OfferTrackDomain
import Testing

@testable import AttributionJoin

/// `DerivedTables.storesSame`: a refresh rewrites a user's conversion row exactly when one stored column differs,
/// strings compared as exact bytes.
@Suite struct ConversionRowComparisonTests {
    static let base = Conversion(
        id: "o1", ts: 1_000, status: .attributed,
        presentation: PresentationFact(
            id: "p1", ts: 900,
            offer: Offer(affiliateToken: "aff", campaignToken: "camp", messageIdentifier: "m", itemID: "i"),
            eligible: true),
        lapse: RecordReference(id: "c9", ts: 2_000),
        review: ConversionReview(record: RecordReference(id: "r1", ts: 3_000), decision: .hold, reason: .fraud))

    /// Each case changes one stored column of `base` (by hand, one per column of `derived_conversions`).
    static let changed: [(column: String, change: @Sendable (inout Conversion) -> Void)] = [
        ("id", { $0.id = "o2" }),
        ("ts", { $0.ts += 1 }),
        ("reason", { $0.status = .unattributed(.notEligible) }),
        ("offer_id", { $0.presentation?.id = "p2" }),
        ("presented_at", { $0.presentation?.ts = 901 }),
        ("affiliate_token", { $0.presentation?.offer.affiliateToken = nil }),
        ("campaign_token", { $0.presentation?.offer.campaignToken = "other" }),
        ("message_identifier", { $0.presentation?.offer.messageIdentifier = "n" }),
        ("item_id", { $0.presentation?.offer.itemID = nil }),
        ("no presentation", { $0.presentation = nil }),
        ("lapse_id", { $0.lapse?.id = "c8" }),
        ("lapse_ts", { $0.lapse?.ts = 1_999 }),
        ("no lapse", { $0.lapse = nil }),
        ("review_id", { $0.review?.record.id = "r2" }),
        ("review_ts", { $0.review?.record.ts = 3_001 }),
        ("review_decision", { $0.review?.decision = .void }),
        ("review_reason", { $0.review?.reason = nil }),
        ("no review", { $0.review = nil }),
    ]

    @Test func oneChangedColumnIsAnotherRow() {
        #expect(DerivedTables.storesSame(Self.base, Self.base))
        #expect(DerivedTables.storesSame(nil, nil))
        #expect(!DerivedTables.storesSame(Self.base, nil) && !DerivedTables.storesSame(nil, Self.base))
        for (column, change) in Self.changed {
            var other = Self.base
            change(&other)
            #expect(!DerivedTables.storesSame(Self.base, other), "\(column)")
        }
        // Ids equal as Swift strings (canonically) but not as bytes are two rows.
        var composed = Self.base
        composed.id = "\u{00E9}"
        var decomposed = Self.base
        decomposed.id = "e\u{0301}"
        #expect(composed.id == decomposed.id && !DerivedTables.storesSame(composed, decomposed))
    }
}
