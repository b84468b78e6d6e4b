/// How `offertrack report --by` groups the funnel (SPEC section 6).
public enum ReportGrouping: String, Sendable, Equatable, CaseIterable {
    case affiliate
    case campaign
    case message
    case day

    /// The group of a presentation: its offer's value (nil when absent), or its UTC date for `day`.
    public func key(presentation: PresentationFact) -> String? {
        self == .day ? Timestamp.formatDay(presentation.ts) : key(offer: presentation.offer)
    }

    /// The group of a conversion: its UTC date for `day`; otherwise the attributed presentation's value, and nil
    /// for unattributed conversions.
    public func key(conversion: Conversion) -> String? {
        if self == .day { return Timestamp.formatDay(conversion.ts) }
        guard conversion.status.isAttributed, let presentation = conversion.presentation else { return nil }
        return key(offer: presentation.offer)
    }

    /// The value of an offer this grouping uses (`join` for a missing message identifier); nil for `day`.
    public func key(offer: Offer) -> String? {
        switch self {
        case .affiliate: offer.affiliateToken
        case .campaign: offer.campaignToken
        case .message: offer.effectiveMessageIdentifier
        case .day: nil
        }
    }
}
