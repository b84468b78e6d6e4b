/// A loaded `offer.presented` record and whether rule 4.4's eligibility check passes for it.
public struct PresentationFact: Sendable, Equatable {
    /// The presentation record's `id`.
    public var id: String
    /// The presentation's `ts` (UTC epoch milliseconds).
    public var ts: Int64
    /// The offer shown.
    public var offer: Offer
    /// True when the user's latest `capabilities` record before it, at most F old, decided `eligible`.
    public var eligible: Bool

    public init(id: String, ts: Int64, offer: Offer, eligible: Bool) {
        self.id = id
        self.ts = ts
        self.offer = offer
        self.eligible = eligible
    }
}
