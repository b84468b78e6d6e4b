/// One row of the commission export (SPEC section 7), without its `kind` and `original_date`.
public struct CommissionRow: Sendable, Equatable {
    public var conversionId: String
    public var convertedAt: Int64
    public var offerId: String
    public var presentedAt: Int64
    public var affiliateToken: String
    public var campaignToken: String?
    /// With the `join` default applied.
    public var messageIdentifier: String
    public var itemID: String?
    public var amountMinor: Int64
    public var currency: String

    public init(
        conversionId: String, convertedAt: Int64, offerId: String, presentedAt: Int64, affiliateToken: String,
        campaignToken: String?, messageIdentifier: String, itemID: String?, amountMinor: Int64, currency: String
    ) {
        self.conversionId = conversionId
        self.convertedAt = convertedAt
        self.offerId = offerId
        self.presentedAt = presentedAt
        self.affiliateToken = affiliateToken
        self.campaignToken = campaignToken
        self.messageIdentifier = messageIdentifier
        self.itemID = itemID
        self.amountMinor = amountMinor
        self.currency = currency
    }

    /// The row an attributed conversion with an affiliate token that is neither lapsed, voided nor held earns
    /// (on the day it qualifies); nil for any other.
    public init?(_ evaluated: EvaluatedConversion, currency: String) {
        let conversion = evaluated.conversion
        guard conversion.status.isAttributed, evaluated.withheldState == nil,
            let presentation = conversion.presentation,
            let token = presentation.offer.affiliateToken
        else { return nil }
        self.init(
            conversionId: conversion.id, convertedAt: conversion.ts, offerId: presentation.id,
            presentedAt: presentation.ts, affiliateToken: token, campaignToken: presentation.offer.campaignToken,
            messageIdentifier: presentation.offer.effectiveMessageIdentifier, itemID: presentation.offer.itemID,
            amountMinor: evaluated.commission.amountMinor, currency: currency)
    }

    /// Whether every column equals `other`'s, tokens and ids compared by their exact bytes.
    public func isSameRow(as other: CommissionRow) -> Bool {
        func same(_ lhs: String?, _ rhs: String?) -> Bool {
            switch (lhs, rhs) {
            case (nil, nil): true
            case (let lhs?, let rhs?): lhs.utf8.elementsEqual(rhs.utf8)
            default: false
            }
        }
        return convertedAt == other.convertedAt && presentedAt == other.presentedAt
            && amountMinor == other.amountMinor && same(conversionId, other.conversionId)
            && same(offerId, other.offerId) && same(affiliateToken, other.affiliateToken)
            && same(campaignToken ?? "", other.campaignToken ?? "")
            && same(messageIdentifier, other.messageIdentifier) && same(itemID ?? "", other.itemID ?? "")
            && same(currency, other.currency)
    }
}
