/// One rule of the commission rules file (SPEC section 5).
public struct CommissionRule: Sendable, Equatable {
    /// The affiliate token the rule applies to, or `*` for any.
    public var affiliateToken: String
    /// The campaign token the rule requires, or nil for any (including none).
    public var campaignToken: String?
    /// The commission in the currency's minor unit.
    public var amountMinor: Int64
    /// Inclusive start (UTC epoch milliseconds), or nil for no start.
    public var from: Int64?
    /// Exclusive end (UTC epoch milliseconds), or nil for no end.
    public var until: Int64?
    /// Whether every conversion whose amount this rule sets is held (rule 4.7) until an operator releases it.
    public var hold: Bool

    public init(
        affiliateToken: String, campaignToken: String?, amountMinor: Int64, from: Int64?, until: Int64?,
        hold: Bool = false
    ) {
        self.affiliateToken = affiliateToken
        self.campaignToken = campaignToken
        self.amountMinor = amountMinor
        self.from = from
        self.until = until
        self.hold = hold
    }

    /// The largest `amountMinor` a rules file may give (SPEC 5): sums of many such amounts stay far from overflow.
    public static let maximumAmountMinor: Int64 = 1_000_000_000_000

    /// The wildcard affiliate token.
    public static let anyAffiliate = "*"

    /// Whether the rule applies to `*`.
    public var isWildcard: Bool { affiliateToken == Self.anyAffiliate }

    /// Specificity rank: 3 token and campaign, 2 token, 1 `*` and campaign, 0 `*`.
    public var specificity: Int {
        (isWildcard ? 0 : 2) + (campaignToken == nil ? 0 : 1)
    }

    /// Whether the rule matches a conversion with these tokens at `ts` (tokens compared by exact scalars).
    public func matches(affiliateToken token: String, campaignToken campaign: String?, at ts: Int64) -> Bool {
        guard isWildcard || affiliateToken.utf8.elementsEqual(token.utf8) else { return false }
        if let required = campaignToken {
            guard let campaign, required.utf8.elementsEqual(campaign.utf8) else { return false }
        }
        if let from, ts < from { return false }
        if let until, ts >= until { return false }
        return true
    }
}
