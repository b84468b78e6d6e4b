import Testing

@testable import OfferTrackDomain
@testable import WireFormat

/// SPEC 3.3: `subscription.outcome` records.
extension RecordValidatorTests {
    /// SPEC 3.3: `subscription.outcome` records.
    static let outcomeRows: [Row] = [
        Row(
            "subscribed", outcome(#""outcome":"subscribed""#),
            .valid(.outcome(subscribed: true, decision: nil, offerId: nil))),
        Row(
            "declined", outcome(#""outcome":"declined""#),
            .valid(.outcome(subscribed: false, decision: nil, offerId: nil))),
        Row("outcome other", outcome(#""outcome":"Subscribed""#), .rejected(.invalidField, field: "outcome")),
        Row("outcome a bool", outcome(#""outcome":true"#), .rejected(.invalidField, field: "outcome")),
        Row("neither", outcome(#""offerId":"p-1""#), .rejected(.missingField, field: "outcome")),
        Row("outcome null, nothing else", outcome(#""outcome":null"#), .rejected(.missingField, field: "outcome")),
        Row(
            "derived from capabilities: subscribed", outcome(#""capabilities":["musicCatalogPlayback"]"#),
            .valid(.outcome(subscribed: true, decision: .subscriber, offerId: nil))),
        Row(
            "derived from capabilities: declined, eligible",
            outcome(#""capabilities":["musicCatalogSubscriptionEligible"]"#),
            .valid(.outcome(subscribed: false, decision: .eligible, offerId: nil))),
        Row(
            "derived from bitmask 0", outcome(#""capabilities":0"#),
            .valid(.outcome(subscribed: false, decision: .ineligible, offerId: nil))),
        Row(
            "derived from bitmask 257", outcome(#""capabilities":257"#),
            .valid(.outcome(subscribed: true, decision: .subscriber, offerId: nil))),
        Row(
            "derived from subscription", outcome(subscriptionObject),
            .valid(.outcome(subscribed: false, decision: .eligible, offerId: nil))),
        Row(
            "authorization is not used", outcome(#""authorization":"denied","capabilities":1"#),
            .valid(.outcome(subscribed: true, decision: .subscriber, offerId: nil))),
        Row(
            "authorization is not even validated", outcome(#""authorization":"bogus","outcome":"declined""#),
            .valid(.outcome(subscribed: false, decision: nil, offerId: nil))),
        Row(
            "outcome with capabilities", outcome(#""outcome":"subscribed","capabilities":1"#),
            .rejected(.invalidField, field: "capabilities")),
        Row(
            "outcome with subscription", outcome(#""outcome":"declined","# + subscriptionObject),
            .rejected(.invalidField, field: "subscription")),
        Row(
            "outcome with both", outcome(#""outcome":"declined","capabilities":1,"# + subscriptionObject),
            .rejected(.invalidField, field: "capabilities")),
        Row(
            "capabilities and subscription, no outcome", outcome(#""capabilities":1,"# + subscriptionObject),
            .rejected(.invalidField, field: "subscription")),
        Row(
            "outcome null with capabilities", outcome(#""outcome":null,"capabilities":2"#),
            .valid(.outcome(subscribed: false, decision: .eligible, offerId: nil))),
        Row(
            "outcome with null capabilities", outcome(#""outcome":"subscribed","capabilities":null"#),
            .valid(.outcome(subscribed: true, decision: nil, offerId: nil))),
        Row(
            "bad capabilities element", outcome(#""capabilities":["musicCatalogPlayback",7]"#),
            .rejected(.invalidField, field: "capabilities[1]")),
        Row("bad bitmask", outcome(#""capabilities":1e0"#), .rejected(.invalidField, field: "capabilities")),
        Row(
            "bad subscription member", outcome(#""subscription":{"canPlayCatalogContent":true}"#),
            .rejected(.missingField, field: "subscription.canBecomeSubscriber")),
        Row(
            "offerId", outcome(#""outcome":"subscribed","offerId":"p-1""#),
            .valid(.outcome(subscribed: true, decision: nil, offerId: "p-1"))),
        Row(
            "offerId null", outcome(#""outcome":"subscribed","offerId":null"#),
            .valid(.outcome(subscribed: true, decision: nil, offerId: nil))),
        Row(
            "offerId invalid", outcome(#""outcome":"subscribed","offerId":"p 1""#),
            .rejected(.invalidField, field: "offerId")),
        Row(
            "offerId 129 chars", outcome("\"outcome\":\"subscribed\",\"offerId\":\"\(id129)\""),
            .rejected(.invalidField, field: "offerId")),
        Row(
            "offerId a number", outcome(#""outcome":"subscribed","offerId":1"#),
            .rejected(.invalidField, field: "offerId")),
        Row(
            "bad outcome and bad offerId: outcome wins", outcome(#""outcome":"x","offerId":"p 1""#),
            .rejected(.invalidField, field: "outcome")),
    ]
}
