/// What a payout statement line is for (SPEC 7.1): an affiliate token and a currency, compared and hashed by
/// their exact bytes and sorted by them, token first.
public struct PayoutPair: Sendable, Hashable, Comparable {
    public let affiliateToken: String
    public let currency: String

    public init(affiliateToken: String, currency: String) {
        self.affiliateToken = affiliateToken
        self.currency = currency
    }

    public static func == (lhs: PayoutPair, rhs: PayoutPair) -> Bool {
        lhs.affiliateToken.utf8.elementsEqual(rhs.affiliateToken.utf8)
            && lhs.currency.utf8.elementsEqual(rhs.currency.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ByteHash.hash(affiliateToken))
        hasher.combine(ByteHash.hash(currency))
    }

    /// By `affiliate_token`'s bytes, then `currency`'s.
    public static func < (lhs: PayoutPair, rhs: PayoutPair) -> Bool {
        if !lhs.affiliateToken.utf8.elementsEqual(rhs.affiliateToken.utf8) {
            return RecordOrder.idPrecedes(lhs.affiliateToken, rhs.affiliateToken)
        }
        return RecordOrder.idPrecedes(lhs.currency, rhs.currency)
    }
}
