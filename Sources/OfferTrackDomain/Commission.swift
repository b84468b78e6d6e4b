/// The amount a conversion earns under rule 4.5, and why it earns nothing when it does not.
public struct Commission: Sendable, Equatable {
    /// The amount in the rules' currency minor unit; 0 when `reason` is set.
    public var amountMinor: Int64
    /// Nil when a rule paid the conversion (possibly 0); otherwise why it earns nothing.
    public var reason: CommissionReason?

    public init(amountMinor: Int64, reason: CommissionReason?) {
        self.amountMinor = amountMinor
        self.reason = reason
    }

    /// Rule 4.5: unattributed earns 0 with its reason; no affiliate token `no_affiliate`; no matching rule `no_rule`.
    public static func evaluate(_ conversion: Conversion, rules: CommissionRules) -> Commission {
        if case .unattributed(let reason) = conversion.status {
            return Commission(amountMinor: 0, reason: CommissionReason(reason))
        }
        guard let offer = conversion.presentation?.offer, let token = offer.affiliateToken else {
            return Commission(amountMinor: 0, reason: .noAffiliate)
        }
        guard let amount = rules.amount(affiliateToken: token, campaignToken: offer.campaignToken, at: conversion.ts)
        else {
            return Commission(amountMinor: 0, reason: .noRule)
        }
        return Commission(amountMinor: amount, reason: nil)
    }
}
