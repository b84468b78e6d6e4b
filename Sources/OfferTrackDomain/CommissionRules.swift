/// The commission rules file of SPEC section 5: currency, windows and rules, validated.
public struct CommissionRules: Sendable, Equatable {
    /// The ISO 4217 currency code amounts are in.
    public let currency: String
    /// The attribution window, eligibility freshness and holding period the file configures.
    public let settings: AttributionSettings
    /// The rules, in file order.
    public let rules: [CommissionRule]
    /// The smallest balance a payout statement pays (SPEC 7.1); smaller balances carry over.
    public let payoutMinimumMinor: Int64
    /// R (SPEC 12): days older than this many days are sealed; nil keeps raw records forever.
    public let retentionDays: Int64?

    /// What applies when no rules file is given: USD, default windows, no rules.
    public static let defaults = CommissionRules(currency: "USD", settings: .defaults, rules: [])

    /// Rules built in code, taken as given (not validated; `init(json:)` validates a file). Among equally specific
    /// matching rules with the same `from`, the first wins.
    public init(
        currency: String, settings: AttributionSettings, rules: [CommissionRule], payoutMinimumMinor: Int64 = 0,
        retentionDays: Int64? = nil
    ) {
        self.currency = currency
        self.settings = settings
        self.rules = rules
        self.payoutMinimumMinor = payoutMinimumMinor
        self.retentionDays = retentionDays
    }

    /// The most specific matching rule (SPEC 5), ties broken by the latest `from`; nil when none matches.
    public func rule(affiliateToken: String, campaignToken: String?, at ts: Int64) -> CommissionRule? {
        ruleIndex(affiliateToken: affiliateToken, campaignToken: campaignToken, at: ts).map { rules[$0] }
    }

    /// The index in the file of the rule `rule(affiliateToken:campaignToken:at:)` picks; nil when none matches.
    public func ruleIndex(affiliateToken: String, campaignToken: String?, at ts: Int64) -> Int? {
        var best: Int?
        for (index, rule) in rules.enumerated()
        where rule.matches(affiliateToken: affiliateToken, campaignToken: campaignToken, at: ts) {
            guard let currentIndex = best else {
                best = index
                continue
            }
            let current = rules[currentIndex]
            if rule.specificity != current.specificity {
                if rule.specificity > current.specificity { best = index }
            } else if (rule.from ?? .min) > (current.from ?? .min) {
                best = index
            }
        }
        return best
    }

    /// The commission for a conversion with these tokens at `ts`; nil when no rule matches.
    public func amount(affiliateToken: String, campaignToken: String?, at ts: Int64) -> Int64? {
        rule(affiliateToken: affiliateToken, campaignToken: campaignToken, at: ts)?.amountMinor
    }
}

extension CommissionRules {
    /// Whether every amount is the same at every instant of `[start, end)`: no rule starts or ends inside it.
    public func amountsAreConstant(from start: Int64, until end: Int64) -> Bool {
        rules.allSatisfy { rule in
            !(rule.from.map { $0 > start && $0 < end } ?? false)
                && !(rule.until.map { $0 > start && $0 < end } ?? false)
        }
    }
}
