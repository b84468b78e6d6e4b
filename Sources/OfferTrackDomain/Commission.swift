/// The amount a conversion earns under rule 4.5, and why it earns nothing when it does not.
public struct Commission: Sendable, Equatable {
    /// The amount in the rules' currency minor unit; 0 when `reason` is set.
    public var amountMinor: Int64
    /// Nil when a rule paid the conversion (possibly 0); otherwise why it earns nothing.
    public var reason: CommissionReason?
    /// The index in the rules file of the rule that set the amount; nil when none did.
    public var rule: Int?
    /// Whether that rule has `"hold": true` (rule 4.7).
    public var heldByRule: Bool

    public init(amountMinor: Int64, reason: CommissionReason?, rule: Int? = nil, heldByRule: Bool = false) {
        self.amountMinor = amountMinor
        self.reason = reason
        self.rule = rule
        self.heldByRule = heldByRule
    }

    /// Rule 4.5: unattributed earns 0 with its reason; no affiliate token `no_affiliate`; no matching rule `no_rule`.
    public static func evaluate(_ conversion: Conversion, rules: CommissionRules) -> Commission {
        if case .unattributed(let reason) = conversion.status {
            return Commission(amountMinor: 0, reason: CommissionReason(reason))
        }
        guard let offer = conversion.presentation?.offer, let token = offer.affiliateToken else {
            return Commission(amountMinor: 0, reason: .noAffiliate)
        }
        guard
            let index = rules.ruleIndex(affiliateToken: token, campaignToken: offer.campaignToken, at: conversion.ts)
        else {
            return Commission(amountMinor: 0, reason: .noRule)
        }
        let rule = rules.rules[index]
        return Commission(amountMinor: rule.amountMinor, reason: nil, rule: index, heldByRule: rule.hold)
    }
}
