import OfferTrackDomain

/// The records the attribution cases are made of, at offsets from `t0` (2026-11-01T00:00:00Z), and the SPEC's
/// default window and freshness.
enum AttributionRecords {
    static let t0: Int64 = 1_793_491_200_000
    static let hour: Int64 = 3_600_000
    static let window = 720 * hour
    static let freshness = 24 * hour

    /// A capabilities check of `user` at `t0 + at`.
    static func check(_ id: String, _ at: Int64, _ decision: EligibilityDecision = .eligible, user: String = "u1")
        -> Record
    {
        Record(id: id, ts: t0 + at, user: user, body: .capabilities(decision))
    }

    /// An offer presented to `user` at `t0 + at`.
    static func presented(
        _ id: String,
        _ at: Int64,
        affiliate: String? = "1010lKxy",
        campaign: String? = nil,
        loaded: Bool = true,
        user: String = "u1"
    ) -> Record {
        let offer = Offer(affiliateToken: affiliate, campaignToken: campaign, messageIdentifier: nil, itemID: nil)
        return Record(id: id, ts: t0 + at, user: user, body: .presented(offer, loaded: loaded))
    }

    /// A subscription outcome of `user` at `t0 + at`.
    static func outcome(
        _ id: String,
        _ at: Int64,
        subscribed: Bool = true,
        decision: EligibilityDecision? = nil,
        offerId: String? = nil,
        user: String = "u1"
    ) -> Record {
        Record(
            id: id, ts: t0 + at, user: user,
            body: .outcome(subscribed: subscribed, decision: decision, offerId: offerId))
    }
}
