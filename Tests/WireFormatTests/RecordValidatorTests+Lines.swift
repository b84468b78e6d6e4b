import Testing

@testable import OfferTrackDomain
@testable import WireFormat

/// The line builders of the validator tables.
extension RecordValidatorTests {
    static let id128 = String(repeating: "a", count: 128)
    static let id129 = String(repeating: "a", count: 129)

    /// A record line from raw JSON member texts; `nil` leaves the member out.
    static func line(
        _ type: String? = #""capabilities""#, id: String? = #""r-1""#, ts: String? = #""2026-11-28T10:15:00Z""#,
        user: String? = #""u-1""#, _ rest: String
    ) -> String {
        let common: [(String, String?)] = [("type", type), ("id", id), ("ts", ts), ("user", user)]
        let members = common.compactMap { name, value in value.map { "\"\(name)\":\($0)" } }
        return "{" + (members + (rest.isEmpty ? [] : [rest])).joined(separator: ",") + "}"
    }

    /// A `capabilities` line with the given members after the common ones.
    static func caps(_ rest: String) -> String { line(#""capabilities""#, rest) }

    /// An authorized `capabilities` line with the given members.
    static func authorized(_ rest: String) -> String { caps(#""authorization":"authorized","# + rest) }

    /// An `offer.presented` line whose `offer` has `action` `subscribe` plus the given members.
    static func offer(_ members: String, _ rest: String = "") -> String {
        let offer = #""offer":{"action":"subscribe""# + (members.isEmpty ? "" : "," + members) + "}"
        return line(#""offer.presented""#, offer + (rest.isEmpty ? "" : "," + rest))
    }

    /// A `subscription.outcome` line with the given members.
    static func outcome(_ rest: String) -> String { line(#""subscription.outcome""#, rest) }

    /// A `review` line with the given members.
    static func review(_ rest: String) -> String { line(#""review""#, rest) }

    static func reviewed(
        _ decision: ReviewDecision, _ reason: ReviewReason? = nil, note: String? = nil, conversion: String = "o-1"
    ) -> RecordBody {
        .review(Review(conversion: conversion, decision: decision, reason: reason, note: note))
    }

    static let subscriptionObject =
        #""subscription":{"canPlayCatalogContent":false,"canBecomeSubscriber":true,"hasCloudLibraryEnabled":false}"#

    static func presented(
        affiliate: String? = nil, campaign: String? = nil, message: String? = nil, item: String? = nil,
        loaded: Bool = true
    ) -> RecordBody {
        .presented(
            Offer(affiliateToken: affiliate, campaignToken: campaign, messageIdentifier: message, itemID: item),
            loaded: loaded)
    }

    /// An `erasure` line with the given members.
    static func erasure(_ rest: String, id: String = #""r-1""#, user: String = #""u-1""#) -> String {
        line(#""erasure""#, id: id, user: user, rest)
    }
}
