import Testing

@testable import OfferTrackDomain
@testable import WireFormat

private let id128 = String(repeating: "a", count: 128)
private let id129 = String(repeating: "a", count: 129)

/// A record line from raw JSON member texts; `nil` leaves the member out.
private func line(
    _ type: String? = #""capabilities""#, id: String? = #""r-1""#, ts: String? = #""2026-11-28T10:15:00Z""#,
    user: String? = #""u-1""#, _ rest: String
) -> String {
    let common: [(String, String?)] = [("type", type), ("id", id), ("ts", ts), ("user", user)]
    let members = common.compactMap { name, value in value.map { "\"\(name)\":\($0)" } }
    return "{" + (members + (rest.isEmpty ? [] : [rest])).joined(separator: ",") + "}"
}

/// A `capabilities` line with the given members after the common ones.
private func caps(_ rest: String) -> String { line(#""capabilities""#, rest) }

/// An authorized `capabilities` line with the given members.
private func authorized(_ rest: String) -> String { caps(#""authorization":"authorized","# + rest) }

/// An `offer.presented` line whose `offer` has `action` `subscribe` plus the given members.
private func offer(_ members: String, _ rest: String = "") -> String {
    let offer = #""offer":{"action":"subscribe""# + (members.isEmpty ? "" : "," + members) + "}"
    return line(#""offer.presented""#, offer + (rest.isEmpty ? "" : "," + rest))
}

/// A `subscription.outcome` line with the given members.
private func outcome(_ rest: String) -> String { line(#""subscription.outcome""#, rest) }

/// A `review` line with the given members.
private func review(_ rest: String) -> String { line(#""review""#, rest) }

private func reviewed(
    _ decision: ReviewDecision, _ reason: ReviewReason? = nil, note: String? = nil, conversion: String = "o-1"
) -> RecordBody {
    .review(Review(conversion: conversion, decision: decision, reason: reason, note: note))
}

private let subscriptionObject =
    #""subscription":{"canPlayCatalogContent":false,"canBecomeSubscriber":true,"hasCloudLibraryEnabled":false}"#

private func presented(
    affiliate: String? = nil, campaign: String? = nil, message: String? = nil, item: String? = nil, loaded: Bool = true
) -> RecordBody {
    .presented(
        Offer(affiliateToken: affiliate, campaignToken: campaign, messageIdentifier: message, itemID: item),
        loaded: loaded)
}

@Suite struct RecordValidatorTests {
    /// One row of the validator tables: a line and what SPEC sections 2–3 say must come of it.
    struct Row: Sendable, CustomTestStringConvertible {
        enum Expectation: Sendable {
            /// Accepted with this body.
            case valid(RecordBody)
            /// Accepted with this `ts` (UTC epoch milliseconds).
            case validAt(Int64)
            /// Rejected with this code and field; the rejected `id` is `r-1` unless `id` says otherwise.
            case rejected(ErrorCode, field: String?, id: String? = "r-1")
        }

        var note: String
        var line: String
        var expectation: Expectation

        init(_ note: String, _ line: String, _ expectation: Expectation) {
            self.note = note
            self.line = line
            self.expectation = expectation
        }

        var testDescription: String { note }
    }

    /// SPEC section 2: JSON, `type`, and which error wins.
    static let envelopeRows: [Row] = [
        Row("not JSON", "not json", .rejected(.invalidJSON, field: nil, id: nil)),
        Row("an array, not an object", #"[{"id":"r-1"}]"#, .rejected(.invalidJSON, field: nil, id: nil)),
        Row("a string, not an object", #""r-1""#, .rejected(.invalidJSON, field: nil, id: nil)),
        Row("spaces only", "   ", .rejected(.invalidJSON, field: nil, id: nil)),
        Row(
            "repeated member name: no id is reported", caps(#""id":"r-2","authorization":0"#),
            .rejected(.invalidJSON, field: nil, id: nil)),
        Row("NaN", caps(#""authorization":NaN"#), .rejected(.invalidJSON, field: nil, id: nil)),
        Row(
            "lone surrogate", line(user: #""\ud800""#, #""authorization":0"#),
            .rejected(.invalidJSON, field: nil, id: nil)),
        Row("type missing", line(nil, #""authorization":0"#), .rejected(.missingField, field: "type")),
        Row("type null counts as absent", line("null", #""authorization":0"#), .rejected(.missingField, field: "type")),
        Row("type unknown", line(#""capability""#, #""authorization":0"#), .rejected(.unknownType, field: nil)),
        Row("type not a string", line("3", #""authorization":0"#), .rejected(.unknownType, field: nil)),
        Row(
            "type is case-sensitive", line(#""Capabilities""#, #""authorization":0"#),
            .rejected(.unknownType, field: nil)),
        Row("type as an array", line(#"["capabilities"]"#, #""authorization":0"#), .rejected(.unknownType, field: nil)),
        Row(
            "unknown type and bad id: unknown_type wins, no id",
            line(#""bogus""#, id: #""a b""#, #""authorization":0"#),
            .rejected(.unknownType, field: nil, id: nil)),
        Row(
            "missing type and bad ts: missing type wins", line(nil, ts: #""yesterday""#, #""authorization":0"#),
            .rejected(.missingField, field: "type")),
        Row(
            "bad id and bad ts: id wins", line(id: #""a b""#, ts: #""yesterday""#, #""authorization":0"#),
            .rejected(.invalidField, field: "id", id: nil)),
        Row(
            "bad ts and bad user: ts wins", line(ts: #""2026-11-28 10:15:00Z""#, user: #""""#, #""authorization":0"#),
            .rejected(.invalidField, field: "ts")),
        Row(
            "bad user and bad app: user wins", line(user: "5", #""app":"","authorization":0"#),
            .rejected(.invalidField, field: "user")),
        Row(
            "bad app and bad device: app wins", caps(#""app":"","device":"","authorization":0"#),
            .rejected(.invalidField, field: "app")),
        Row(
            "bad device and bad own field: device wins", caps(#""device":1,"authorization":"x""#),
            .rejected(.invalidField, field: "device")),
        Row(
            "valid id is reported on a later failure", offer(#""affiliateToken":"a.b""#),
            .rejected(.invalidField, field: "offer.affiliateToken", id: "r-1")),
        Row(
            "unknown members are ignored", caps(#""authorization":0,"extra":{"nested":[1,{"x":null}]},"x":1e999"#),
            .valid(.capabilities(.unauthorized))),
    ]

    /// SPEC section 3: `id`, `ts`, `user`, `app`, `device`.
    static let commonFieldRows: [Row] = [
        Row("id missing", line(id: nil, #""authorization":0"#), .rejected(.missingField, field: "id", id: nil)),
        Row("id null", line(id: "null", #""authorization":0"#), .rejected(.missingField, field: "id", id: nil)),
        Row("id 128 chars", line(id: "\"\(id128)\"", #""authorization":0"#), .valid(.capabilities(.unauthorized))),
        Row(
            "id 129 chars", line(id: "\"\(id129)\"", #""authorization":0"#),
            .rejected(.invalidField, field: "id", id: nil)),
        Row("id empty", line(id: #""""#, #""authorization":0"#), .rejected(.invalidField, field: "id", id: nil)),
        Row(
            "id every allowed char", line(id: #""AZaz09._:-""#, #""authorization":0"#),
            .valid(.capabilities(.unauthorized))),
        Row(
            "id with a space", line(id: #""a b""#, #""authorization":0"#),
            .rejected(.invalidField, field: "id", id: nil)),
        Row(
            "id with a slash", line(id: #""a/b""#, #""authorization":0"#),
            .rejected(.invalidField, field: "id", id: nil)),
        Row(
            "id non-ASCII", line(id: #""caf\u00e9""#, #""authorization":0"#),
            .rejected(.invalidField, field: "id", id: nil)),
        Row("id a number", line(id: "12", #""authorization":0"#), .rejected(.invalidField, field: "id", id: nil)),
        Row("ts missing", line(ts: nil, #""authorization":0"#), .rejected(.missingField, field: "ts")),
        Row("ts null", line(ts: "null", #""authorization":0"#), .rejected(.missingField, field: "ts")),
        Row("ts a number", line(ts: "1795860900000", #""authorization":0"#), .rejected(.invalidField, field: "ts")),
        Row("ts Z", line(ts: #""2026-11-28T10:15:00Z""#, #""authorization":0"#), .validAt(1_795_860_900_000)),
        Row(
            "ts lower-case t and z", line(ts: #""2026-11-28t10:15:00z""#, #""authorization":0"#),
            .validAt(1_795_860_900_000)),
        Row(
            "ts offset +01:00", line(ts: #""2026-11-28T11:15:00.250+01:00""#, #""authorization":0"#),
            .validAt(1_795_860_900_250)),
        Row(
            "ts offset -05:30", line(ts: #""2026-11-28T04:45:00-05:30""#, #""authorization":0"#),
            .validAt(1_795_860_900_000)),
        Row(
            "ts fraction .9999 truncates", line(ts: #""2026-11-28T10:15:00.9999Z""#, #""authorization":0"#),
            .validAt(1_795_860_900_999)),
        Row(
            "ts negative epoch truncates", line(ts: #""1969-12-31T23:59:59.9999Z""#, #""authorization":0"#),
            .validAt(-1)),
        Row(
            "ts space separator", line(ts: #""2026-11-28 10:15:00Z""#, #""authorization":0"#),
            .rejected(.invalidField, field: "ts")),
        Row(
            "ts second 60", line(ts: #""2016-12-31T23:59:60Z""#, #""authorization":0"#),
            .rejected(.invalidField, field: "ts")),
        Row(
            "ts year 0000", line(ts: #""0000-01-01T00:00:00Z""#, #""authorization":0"#),
            .rejected(.invalidField, field: "ts")),
        Row("ts year 0001", line(ts: #""0001-01-01T00:00:00Z""#, #""authorization":0"#), .validAt(-62_135_596_800_000)),
        Row(
            "ts Feb 29 leap year", line(ts: #""2024-02-29T00:00:00Z""#, #""authorization":0"#),
            .validAt(1_709_164_800_000)),
        Row(
            "ts Feb 29 non-leap", line(ts: #""2026-02-29T00:00:00Z""#, #""authorization":0"#),
            .rejected(.invalidField, field: "ts")),
        Row(
            "ts without zone", line(ts: #""2026-11-28T10:15:00""#, #""authorization":0"#),
            .rejected(.invalidField, field: "ts")),
        Row("ts date only", line(ts: #""2026-11-28""#, #""authorization":0"#), .rejected(.invalidField, field: "ts")),
        Row("user missing", line(user: nil, #""authorization":0"#), .rejected(.missingField, field: "user")),
        Row("user null", line(user: "null", #""authorization":0"#), .rejected(.missingField, field: "user")),
        Row("user empty", line(user: #""""#, #""authorization":0"#), .rejected(.invalidField, field: "user")),
        Row("user a number", line(user: "7", #""authorization":0"#), .rejected(.invalidField, field: "user")),
        Row("user 128 chars", line(user: "\"\(id128)\"", #""authorization":0"#), .valid(.capabilities(.unauthorized))),
        Row(
            "user 129 chars", line(user: "\"\(id129)\"", #""authorization":0"#), .rejected(.invalidField, field: "user")
        ),
        Row(
            "user 128 two-byte scalars", line(user: "\"\(String(repeating: "é", count: 128))\"", #""authorization":0"#),
            .valid(.capabilities(.unauthorized))),
        Row(
            "user 129 two-byte scalars", line(user: "\"\(String(repeating: "é", count: 129))\"", #""authorization":0"#),
            .rejected(.invalidField, field: "user")),
        Row(
            "user with U+0085 escaped", line(user: #""u\u0085""#, #""authorization":0"#),
            .rejected(.invalidField, field: "user")),
        Row(
            "user with U+0085 raw", line(user: "\"u\u{85}\"", #""authorization":0"#),
            .rejected(.invalidField, field: "user")),
        Row(
            "user with U+009F", line(user: #""u\u009f""#, #""authorization":0"#),
            .rejected(.invalidField, field: "user")),
        Row(
            "user with U+007F", line(user: #""u\u007f""#, #""authorization":0"#),
            .rejected(.invalidField, field: "user")),
        Row(
            "user with U+001F", line(user: #""u\u001f""#, #""authorization":0"#),
            .rejected(.invalidField, field: "user")),
        Row("user with a tab", line(user: #""u\t""#, #""authorization":0"#), .rejected(.invalidField, field: "user")),
        Row(
            "user with U+00A0 is fine", line(user: #""u\u00a0""#, #""authorization":0"#),
            .valid(.capabilities(.unauthorized))),
        Row(
            "user with U+0100 is fine", line(user: #""u\u0100""#, #""authorization":0"#),
            .valid(.capabilities(.unauthorized))),
        Row(
            "app 255 chars", caps("\"app\":\"\(String(repeating: "a", count: 255))\",\"authorization\":0"),
            .valid(.capabilities(.unauthorized))),
        Row(
            "app 256 chars", caps("\"app\":\"\(String(repeating: "a", count: 256))\",\"authorization\":0"),
            .rejected(.invalidField, field: "app")),
        Row("app empty", caps(#""app":"","authorization":0"#), .rejected(.invalidField, field: "app")),
        Row("app null is absent", caps(#""app":null,"authorization":0"#), .valid(.capabilities(.unauthorized))),
        Row("app a number", caps(#""app":1,"authorization":0"#), .rejected(.invalidField, field: "app")),
        Row(
            "app with a control char", caps(#""app":"com.x\n","authorization":0"#),
            .rejected(.invalidField, field: "app")),
        Row(
            "device 128 chars", caps("\"device\":\"\(id128)\",\"authorization\":0"),
            .valid(.capabilities(.unauthorized))),
        Row(
            "device 129 chars", caps("\"device\":\"\(id129)\",\"authorization\":0"),
            .rejected(.invalidField, field: "device")),
        Row("device empty", caps(#""device":"","authorization":0"#), .rejected(.invalidField, field: "device")),
        Row(
            "device with U+0080", caps(#""device":"\u0080","authorization":0"#),
            .rejected(.invalidField, field: "device")),
        Row("device null is absent", caps(#""device":null,"authorization":0"#), .valid(.capabilities(.unauthorized))),
    ]

    /// SPEC 3.1: `capabilities` records and their decisions.
    static let capabilitiesRows: [Row] = [
        Row("authorization missing", caps(#""capabilities":[]"#), .rejected(.missingField, field: "authorization")),
        Row("authorization null", caps(#""authorization":null"#), .rejected(.missingField, field: "authorization")),
        Row("notDetermined", caps(#""authorization":"notDetermined""#), .valid(.capabilities(.unauthorized))),
        Row("denied", caps(#""authorization":"denied""#), .valid(.capabilities(.unauthorized))),
        Row("restricted", caps(#""authorization":"restricted""#), .valid(.capabilities(.unauthorized))),
        Row("raw 0", caps(#""authorization":0"#), .valid(.capabilities(.unauthorized))),
        Row("raw 1", caps(#""authorization":1"#), .valid(.capabilities(.unauthorized))),
        Row("raw 2", caps(#""authorization":2"#), .valid(.capabilities(.unauthorized))),
        Row("raw 3 is authorized", caps(#""authorization":3,"capabilities":2"#), .valid(.capabilities(.eligible))),
        Row("raw -0 is the integer 0", caps(#""authorization":-0"#), .valid(.capabilities(.unauthorized))),
        Row("raw 4", caps(#""authorization":4"#), .rejected(.invalidField, field: "authorization")),
        Row("raw -1", caps(#""authorization":-1"#), .rejected(.invalidField, field: "authorization")),
        Row("raw 3.0", caps(#""authorization":3.0"#), .rejected(.invalidField, field: "authorization")),
        Row("raw 3e0", caps(#""authorization":3e0"#), .rejected(.invalidField, field: "authorization")),
        Row("raw as a string", caps(#""authorization":"3""#), .rejected(.invalidField, field: "authorization")),
        Row(
            "name is case-sensitive", caps(#""authorization":"Authorized""#),
            .rejected(.invalidField, field: "authorization")),
        Row("authorization a bool", caps(#""authorization":true"#), .rejected(.invalidField, field: "authorization")),
        Row(
            "authorized without capabilities", caps(#""authorization":"authorized""#),
            .rejected(.missingField, field: "capabilities")),
        Row(
            "authorized with null capabilities", authorized(#""capabilities":null"#),
            .rejected(.missingField, field: "capabilities")),
        Row("authorized, no capabilities", authorized(#""capabilities":[]"#), .valid(.capabilities(.ineligible))),
        Row("playback", authorized(#""capabilities":["musicCatalogPlayback"]"#), .valid(.capabilities(.subscriber))),
        Row(
            "eligible", authorized(#""capabilities":["musicCatalogSubscriptionEligible"]"#),
            .valid(.capabilities(.eligible))),
        Row(
            "playback and eligible",
            authorized(#""capabilities":["musicCatalogSubscriptionEligible","musicCatalogPlayback"]"#),
            .valid(.capabilities(.subscriber))),
        Row(
            "cloud library only", authorized(#""capabilities":["addToCloudMusicLibrary"]"#),
            .valid(.capabilities(.ineligible))),
        Row(
            "repeats allowed",
            authorized(#""capabilities":["musicCatalogSubscriptionEligible","musicCatalogSubscriptionEligible"]"#),
            .valid(.capabilities(.eligible))),
        Row(
            "unknown name", authorized(#""capabilities":["musicCatalogPlayback","addToCloudMusicLibrary","bogus"]"#),
            .rejected(.invalidField, field: "capabilities[2]")),
        Row("non-string name", authorized(#""capabilities":[1]"#), .rejected(.invalidField, field: "capabilities[0]")),
        Row(
            "null name", authorized(#""capabilities":["musicCatalogPlayback",null]"#),
            .rejected(.invalidField, field: "capabilities[1]")),
        Row("bitmask 0", authorized(#""capabilities":0"#), .valid(.capabilities(.ineligible))),
        Row("bitmask 1", authorized(#""capabilities":1"#), .valid(.capabilities(.subscriber))),
        Row("bitmask 2", authorized(#""capabilities":2"#), .valid(.capabilities(.eligible))),
        Row("bitmask 3", authorized(#""capabilities":3"#), .valid(.capabilities(.subscriber))),
        Row("bitmask 256", authorized(#""capabilities":256"#), .valid(.capabilities(.ineligible))),
        Row("bitmask 257", authorized(#""capabilities":257"#), .valid(.capabilities(.subscriber))),
        Row("bitmask 258", authorized(#""capabilities":258"#), .valid(.capabilities(.eligible))),
        Row("bitmask -0 is 0", authorized(#""capabilities":-0"#), .valid(.capabilities(.ineligible))),
        Row("bitmask 4", authorized(#""capabilities":4"#), .rejected(.invalidField, field: "capabilities")),
        Row("bitmask 512", authorized(#""capabilities":512"#), .rejected(.invalidField, field: "capabilities")),
        Row("bitmask -1", authorized(#""capabilities":-1"#), .rejected(.invalidField, field: "capabilities")),
        Row("bitmask 1.0", authorized(#""capabilities":1.0"#), .rejected(.invalidField, field: "capabilities")),
        Row("bitmask 1e0", authorized(#""capabilities":1e0"#), .rejected(.invalidField, field: "capabilities")),
        Row(
            "bitmask huge", authorized(#""capabilities":99999999999999999999"#),
            .rejected(.invalidField, field: "capabilities")),
        Row(
            "capabilities a string", authorized(#""capabilities":"musicCatalogPlayback""#),
            .rejected(.invalidField, field: "capabilities")),
        Row(
            "capabilities an object", authorized(#""capabilities":{}"#), .rejected(.invalidField, field: "capabilities")
        ),
        Row(
            "capabilities a bool", authorized(#""capabilities":true"#), .rejected(.invalidField, field: "capabilities")),
        Row("subscription: eligible", authorized(subscriptionObject), .valid(.capabilities(.eligible))),
        Row(
            "subscription: subscriber",
            authorized(
                #""subscription":{"canPlayCatalogContent":true,"canBecomeSubscriber":false,"hasCloudLibraryEnabled":true}"#
            ),
            .valid(.capabilities(.subscriber))),
        Row(
            "subscription: ineligible",
            authorized(
                #""subscription":{"canPlayCatalogContent":false,"canBecomeSubscriber":false,"hasCloudLibraryEnabled":true}"#
            ),
            .valid(.capabilities(.ineligible))),
        Row(
            "subscription member order is free",
            authorized(
                #""subscription":{"hasCloudLibraryEnabled":true,"canBecomeSubscriber":true,"canPlayCatalogContent":false}"#
            ),
            .valid(.capabilities(.eligible))),
        Row(
            "subscription missing canPlayCatalogContent",
            authorized(#""subscription":{"canBecomeSubscriber":true,"hasCloudLibraryEnabled":false}"#),
            .rejected(.missingField, field: "subscription.canPlayCatalogContent")),
        Row(
            "subscription missing canBecomeSubscriber",
            authorized(#""subscription":{"canPlayCatalogContent":false,"hasCloudLibraryEnabled":false}"#),
            .rejected(.missingField, field: "subscription.canBecomeSubscriber")),
        Row(
            "subscription missing hasCloudLibraryEnabled",
            authorized(#""subscription":{"canPlayCatalogContent":false,"canBecomeSubscriber":true}"#),
            .rejected(.missingField, field: "subscription.hasCloudLibraryEnabled")),
        Row(
            "subscription member null",
            authorized(
                #""subscription":{"canPlayCatalogContent":false,"canBecomeSubscriber":null,"hasCloudLibraryEnabled":false}"#
            ),
            .rejected(.missingField, field: "subscription.canBecomeSubscriber")),
        Row(
            "subscription member wrong type",
            authorized(
                #""subscription":{"canPlayCatalogContent":false,"canBecomeSubscriber":"true","hasCloudLibraryEnabled":false}"#
            ),
            .rejected(.invalidField, field: "subscription.canBecomeSubscriber")),
        Row(
            "subscription member a number",
            authorized(
                #""subscription":{"canPlayCatalogContent":1,"canBecomeSubscriber":true,"hasCloudLibraryEnabled":false}"#
            ),
            .rejected(.invalidField, field: "subscription.canPlayCatalogContent")),
        Row(
            "subscription: the listed order decides", authorized(#""subscription":{"canBecomeSubscriber":0}"#),
            .rejected(.missingField, field: "subscription.canPlayCatalogContent")),
        Row(
            "subscription not an object", authorized(#""subscription":[]"#),
            .rejected(.invalidField, field: "subscription")),
        Row(
            "subscription a string", authorized(#""subscription":"yes""#),
            .rejected(.invalidField, field: "subscription")),
        Row(
            "both forms", authorized(#""capabilities":2,"# + subscriptionObject),
            .rejected(.invalidField, field: "subscription")),
        Row(
            "both forms, bad capabilities: capabilities is checked first",
            authorized(#""capabilities":[5],"# + subscriptionObject),
            .rejected(.invalidField, field: "capabilities[0]")),
        Row(
            "both forms, bad subscription: the pair is refused first",
            authorized(#""capabilities":2,"subscription":{}"#),
            .rejected(.invalidField, field: "subscription")),
        Row(
            "capabilities null, subscription given", authorized(#""capabilities":null,"# + subscriptionObject),
            .valid(.capabilities(.eligible))),
        Row(
            "authorized by raw 3 with subscription", caps(#""authorization":3,"# + subscriptionObject),
            .valid(.capabilities(.eligible))),
        Row(
            "denied with playback", caps(#""authorization":"denied","capabilities":["musicCatalogPlayback"]"#),
            .valid(.capabilities(.unauthorized))),
        Row(
            "denied, capabilities still validated", caps(#""authorization":"denied","capabilities":[5]"#),
            .rejected(.invalidField, field: "capabilities[0]")),
        Row(
            "denied, subscription still validated", caps(#""authorization":1,"subscription":{}"#),
            .rejected(.missingField, field: "subscription.canPlayCatalogContent")),
        Row(
            "denied, both forms", caps(#""authorization":2,"capabilities":0,"# + subscriptionObject),
            .rejected(.invalidField, field: "subscription")),
    ]

    /// SPEC 3.2: `offer.presented` records.
    static let presentedRows: [Row] = [
        Row("offer missing", line(#""offer.presented""#, #""loaded":true"#), .rejected(.missingField, field: "offer")),
        Row("offer null", line(#""offer.presented""#, #""offer":null"#), .rejected(.missingField, field: "offer")),
        Row(
            "offer a string", line(#""offer.presented""#, #""offer":"subscribe""#),
            .rejected(.invalidField, field: "offer")),
        Row("offer an array", line(#""offer.presented""#, #""offer":[]"#), .rejected(.invalidField, field: "offer")),
        Row(
            "bad offer and bad loaded: offer wins", line(#""offer.presented""#, #""offer":1,"loaded":1"#),
            .rejected(.invalidField, field: "offer")),
        Row(
            "offer.action missing", line(#""offer.presented""#, #""offer":{}"#),
            .rejected(.missingField, field: "offer.action")),
        Row(
            "offer.action null", line(#""offer.presented""#, #""offer":{"action":null}"#),
            .rejected(.missingField, field: "offer.action")),
        Row(
            "offer.action other", line(#""offer.presented""#, #""offer":{"action":"Subscribe"}"#),
            .rejected(.invalidField, field: "offer.action")),
        Row(
            "offer.action a number", line(#""offer.presented""#, #""offer":{"action":1}"#),
            .rejected(.invalidField, field: "offer.action")),
        Row(
            "bad action and bad token: action wins",
            line(#""offer.presented""#, #""offer":{"affiliateToken":"","action":"x"}"#),
            .rejected(.invalidField, field: "offer.action")),
        Row("minimal offer", offer(""), .valid(presented())),
        Row(
            "affiliateToken 64", offer("\"affiliateToken\":\"\(String(repeating: "A", count: 64))\""),
            .valid(presented(affiliate: String(repeating: "A", count: 64)))),
        Row(
            "affiliateToken 65", offer("\"affiliateToken\":\"\(String(repeating: "A", count: 65))\""),
            .rejected(.invalidField, field: "offer.affiliateToken")),
        Row(
            "affiliateToken every allowed char", offer(#""affiliateToken":"azAZ09_-""#),
            .valid(presented(affiliate: "azAZ09_-"))),
        Row(
            "affiliateToken empty", offer(#""affiliateToken":"""#),
            .rejected(.invalidField, field: "offer.affiliateToken")),
        Row(
            "affiliateToken with a dot", offer(#""affiliateToken":"a.b""#),
            .rejected(.invalidField, field: "offer.affiliateToken")),
        Row(
            "affiliateToken non-ASCII", offer(#""affiliateToken":"\u00e9""#),
            .rejected(.invalidField, field: "offer.affiliateToken")),
        Row(
            "affiliateToken a number", offer(#""affiliateToken":1010"#),
            .rejected(.invalidField, field: "offer.affiliateToken")),
        Row("affiliateToken null", offer(#""affiliateToken":null"#), .valid(presented())),
        Row(
            "campaignToken 40", offer("\"campaignToken\":\"\(String(repeating: "c", count: 40))\""),
            .valid(presented(campaign: String(repeating: "c", count: 40)))),
        Row(
            "campaignToken 41", offer("\"campaignToken\":\"\(String(repeating: "c", count: 41))\""),
            .rejected(.invalidField, field: "offer.campaignToken")),
        Row(
            "campaignToken 40 scalars", offer("\"campaignToken\":\"\(String(repeating: "é", count: 40))\""),
            .valid(presented(campaign: String(repeating: "é", count: 40)))),
        Row(
            "campaignToken with spaces", offer(#""campaignToken":"spring 26""#),
            .valid(presented(campaign: "spring 26"))),
        Row(
            "campaignToken empty", offer(#""campaignToken":"""#), .rejected(.invalidField, field: "offer.campaignToken")
        ),
        Row(
            "campaignToken ?", offer(#""campaignToken":"a?b""#), .rejected(.invalidField, field: "offer.campaignToken")),
        Row(
            "campaignToken !", offer(#""campaignToken":"a!b""#), .rejected(.invalidField, field: "offer.campaignToken")),
        Row(
            "campaignToken &", offer(#""campaignToken":"a&b""#), .rejected(.invalidField, field: "offer.campaignToken")),
        Row(
            "campaignToken control", offer(#""campaignToken":"a\u0001""#),
            .rejected(.invalidField, field: "offer.campaignToken")),
        Row(
            "campaignToken C1 control", offer(#""campaignToken":"a\u0085""#),
            .rejected(.invalidField, field: "offer.campaignToken")),
        Row(
            "campaignToken a number", offer(#""campaignToken":26"#),
            .rejected(.invalidField, field: "offer.campaignToken")),
        Row("messageIdentifier join", offer(#""messageIdentifier":"join""#), .valid(presented(message: "join"))),
        Row(
            "messageIdentifier addMusic", offer(#""messageIdentifier":"addMusic""#),
            .valid(presented(message: "addMusic"))),
        Row(
            "messageIdentifier connect", offer(#""messageIdentifier":"connect""#), .valid(presented(message: "connect"))
        ),
        Row(
            "messageIdentifier playMusic", offer(#""messageIdentifier":"playMusic""#),
            .valid(presented(message: "playMusic"))),
        Row(
            "messageIdentifier other", offer(#""messageIdentifier":"JOIN""#),
            .rejected(.invalidField, field: "offer.messageIdentifier")),
        Row(
            "messageIdentifier a number", offer(#""messageIdentifier":0"#),
            .rejected(.invalidField, field: "offer.messageIdentifier")),
        Row("itemID", offer(#""itemID":"1440857781""#), .valid(presented(item: "1440857781"))),
        Row(
            "itemID 20 digits", offer(#""itemID":"12345678901234567890""#),
            .valid(presented(item: "12345678901234567890"))),
        Row(
            "itemID 21 digits", offer(#""itemID":"123456789012345678901""#),
            .rejected(.invalidField, field: "offer.itemID")),
        Row("itemID empty", offer(#""itemID":"""#), .rejected(.invalidField, field: "offer.itemID")),
        Row("itemID not digits", offer(#""itemID":"12a""#), .rejected(.invalidField, field: "offer.itemID")),
        Row(
            "itemID non-ASCII digits", offer(#""itemID":"\u0661\u0662""#),
            .rejected(.invalidField, field: "offer.itemID")),
        Row("itemID a number", offer(#""itemID":1440857781"#), .rejected(.invalidField, field: "offer.itemID")),
        Row(
            "iTunesItemIdentifier", offer(#""iTunesItemIdentifier":"1440857781""#),
            .valid(presented(item: "1440857781"))),
        Row(
            "iTunesItemIdentifier a number", offer(#""iTunesItemIdentifier":1440857781"#),
            .rejected(.invalidField, field: "offer.iTunesItemIdentifier")),
        Row(
            "itemID and iTunesItemIdentifier", offer(#""itemID":"1","iTunesItemIdentifier":"1""#),
            .rejected(.invalidField, field: "offer.iTunesItemIdentifier")),
        Row(
            "iTunesItemIdentifier first, itemID second: still named as listed",
            offer(#""iTunesItemIdentifier":"1","itemID":"2""#),
            .rejected(.invalidField, field: "offer.iTunesItemIdentifier")),
        Row(
            "itemID null and iTunesItemIdentifier", offer(#""itemID":null,"iTunesItemIdentifier":"7""#),
            .valid(presented(item: "7"))),
        Row(
            "bad campaign and bad itemID: campaign wins", offer(#""itemID":1,"campaignToken":"&""#),
            .rejected(.invalidField, field: "offer.campaignToken")),
        Row(
            "bad affiliate and bad campaign: affiliate wins", offer(#""campaignToken":"&","affiliateToken":".""#),
            .rejected(.invalidField, field: "offer.affiliateToken")),
        Row("loaded false", offer("", #""loaded":false"#), .valid(presented(loaded: false))),
        Row("loaded true", offer("", #""loaded":true"#), .valid(presented())),
        Row("loaded null is the default", offer("", #""loaded":null"#), .valid(presented())),
        Row("loaded a string", offer("", #""loaded":"false""#), .rejected(.invalidField, field: "loaded")),
        Row("loaded inside offer is an unknown member", offer(#""loaded":"x""#), .valid(presented())),
        Row("unknown offer members ignored", offer(#""foo":{"bar":[1,2]},"ITEMID":5"#), .valid(presented())),
    ]

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

    @Test(arguments: envelopeRows) func envelope(_ row: Row) { check(row) }
    @Test(arguments: commonFieldRows) func commonFields(_ row: Row) { check(row) }
    @Test(arguments: capabilitiesRows) func capabilitiesRecords(_ row: Row) { check(row) }
    @Test(arguments: presentedRows) func presentedRecords(_ row: Row) { check(row) }
    @Test(arguments: outcomeRows) func outcomeRecords(_ row: Row) { check(row) }
    @Test(arguments: reviewRows) func reviewRecords(_ row: Row) { check(row) }

    /// SPEC 3.4, row by row, in the order of its table: conversion, decision, reason, note.
    static let reviewRows: [Row] = [
        Row(
            "void for fraud", review(#""conversion":"o-1","decision":"void","reason":"fraud""#),
            .valid(reviewed(.void, .fraud))),
        Row(
            "hold for policy, with a note",
            review(#""conversion":"o-1","decision":"hold","reason":"policy","note":"ask""#),
            .valid(reviewed(.hold, .policy, note: "ask"))),
        Row(
            "release without a reason", review(#""conversion":"o-1","decision":"release""#), .valid(reviewed(.release))),
        Row(
            "release with a reason", review(#""conversion":"o-1","decision":"release","reason":"other""#),
            .valid(reviewed(.release, .other))),
        Row(
            "each reason: refund", review(#""conversion":"o-1","decision":"void","reason":"refund""#),
            .valid(reviewed(.void, .refund))),
        Row(
            "each reason: duplicate", review(#""conversion":"o-1","decision":"void","reason":"duplicate""#),
            .valid(reviewed(.void, .duplicate))),
        Row(
            "each reason: test", review(#""conversion":"o-1","decision":"hold","reason":"test""#),
            .valid(reviewed(.hold, .test))),
        Row(
            "unknown members are kept and ignored",
            review(#""conversion":"o-1","decision":"void","reason":"fraud","ticket":{"n":1}"#),
            .valid(reviewed(.void, .fraud))),
        Row(
            "conversion missing", review(#""decision":"void","reason":"fraud""#),
            .rejected(.missingField, field: "conversion")),
        Row(
            "conversion null counts as absent", review(#""conversion":null,"decision":"void","reason":"fraud""#),
            .rejected(.missingField, field: "conversion")),
        Row(
            "conversion not an id", review(#""conversion":"o 1","decision":"void","reason":"fraud""#),
            .rejected(.invalidField, field: "conversion")),
        Row(
            "conversion 129 characters",
            review("\"conversion\":\"\(id129)\",\"decision\":\"void\",\"reason\":\"fraud\""),
            .rejected(.invalidField, field: "conversion")),
        Row(
            "conversion 128 characters", review("\"conversion\":\"\(id128)\",\"decision\":\"release\""),
            .valid(reviewed(.release, conversion: id128))),
        Row(
            "conversion a number", review(#""conversion":7,"decision":"void","reason":"fraud""#),
            .rejected(.invalidField, field: "conversion")),
        Row(
            "decision missing", review(#""conversion":"o-1","reason":"fraud""#),
            .rejected(.missingField, field: "decision")),
        Row(
            "decision unknown", review(#""conversion":"o-1","decision":"cancel","reason":"fraud""#),
            .rejected(.invalidField, field: "decision")),
        Row(
            "decision is case-sensitive", review(#""conversion":"o-1","decision":"Void","reason":"fraud""#),
            .rejected(.invalidField, field: "decision")),
        Row(
            "reason required for void", review(#""conversion":"o-1","decision":"void""#),
            .rejected(.missingField, field: "reason")),
        Row(
            "reason required for hold, null counts as absent",
            review(#""conversion":"o-1","decision":"hold","reason":null"#), .rejected(.missingField, field: "reason")),
        Row(
            "reason unknown", review(#""conversion":"o-1","decision":"void","reason":"chargeback""#),
            .rejected(.invalidField, field: "reason")),
        Row(
            "reason unknown on a release", review(#""conversion":"o-1","decision":"release","reason":"oops""#),
            .rejected(.invalidField, field: "reason")),
        Row(
            "note empty", review(#""conversion":"o-1","decision":"release","note":"""#),
            .rejected(.invalidField, field: "note")),
        Row(
            "note of 500 characters",
            review(
                "\"conversion\":\"o-1\",\"decision\":\"release\",\"note\":\"\(String(repeating: "é", count: 500))\""),
            .valid(reviewed(.release, note: String(repeating: "é", count: 500)))),
        Row(
            "note of 501 characters",
            review(
                "\"conversion\":\"o-1\",\"decision\":\"release\",\"note\":\"\(String(repeating: "n", count: 501))\""),
            .rejected(.invalidField, field: "note")),
        Row(
            "note with a control character", review(#""conversion":"o-1","decision":"release","note":"a\u0085b""#),
            .rejected(.invalidField, field: "note")),
        Row(
            "note not a string", review(#""conversion":"o-1","decision":"release","note":5"#),
            .rejected(.invalidField, field: "note")),
        Row(
            "bad conversion and bad decision: conversion wins", review(#""conversion":"o 1","decision":"x""#),
            .rejected(.invalidField, field: "conversion")),
        Row(
            "bad decision and missing reason: decision wins", review(#""conversion":"o-1","decision":"x""#),
            .rejected(.invalidField, field: "decision")),
        Row(
            "missing reason and bad note: reason wins", review(#""conversion":"o-1","decision":"void","note":"""#),
            .rejected(.missingField, field: "reason")),
        Row(
            "bad user before the review's own fields", line(#""review""#, user: "5", #""decision":"x""#),
            .rejected(.invalidField, field: "user")),
    ]

    private func check(_ row: Row, sourceLocation: SourceLocation = #_sourceLocation) {
        let verdict = RecordValidator.validate(Array(row.line.utf8))
        switch (row.expectation, verdict) {
        case (.valid(let body), .valid(let record)):
            #expect(record.body == body, sourceLocation: sourceLocation)
        case (.validAt(let ts), .valid(let record)):
            #expect(record.ts == ts, sourceLocation: sourceLocation)
        case (.rejected(let code, let field, let id), .rejected(let rejectedID, let error)):
            #expect(error.code == code, "\(error.message)", sourceLocation: sourceLocation)
            #expect(error.field == field, "\(error.message)", sourceLocation: sourceLocation)
            #expect(rejectedID == id, sourceLocation: sourceLocation)
            #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
            if let field {
                #expect(error.message.contains(field), "message must name the field", sourceLocation: sourceLocation)
            }
        default:
            Issue.record("expected \(row.expectation), got \(verdict)", sourceLocation: sourceLocation)
        }
    }

    @Test func validRecordCarriesCommonFields() {
        let verdict = RecordValidator.validate(
            Array(caps(#""authorization":"denied","app":"com.x","device":"d""#).utf8))
        #expect(
            verdict == .valid(Record(id: "r-1", ts: 1_795_860_900_000, user: "u-1", body: .capabilities(.unauthorized)))
        )
    }

    @Test func userKeepsItsExactScalars() {
        guard
            case .valid(let record) = RecordValidator.validate(
                Array(line(user: #""e\u0301""#, #""authorization":0"#).utf8))
        else {
            Issue.record("not valid")
            return
        }
        #expect(record.user.unicodeScalars.map(\.value) == [0x65, 0x301])
    }

    @Test func rawBufferEntryPointAgrees() {
        let bytes = Array(offer(#""affiliateToken":"t""#).utf8)
        let fromBuffer = bytes.withUnsafeBytes { RecordValidator.validate($0, sharedUsers: .defaults) }
        #expect(fromBuffer == RecordValidator.validate(bytes))
        #expect(
            fromBuffer == .valid(Record(id: "r-1", ts: 1_795_860_900_000, user: "u-1", body: presented(affiliate: "t")))
        )
    }
}

/// An `erasure` line with the given members.
private func erasure(_ rest: String, id: String = #""r-1""#, user: String = #""u-1""#) -> String {
    line(#""erasure""#, id: id, user: user, rest)
}

extension RecordValidatorTests {
    @Test(arguments: erasureRows) func erasureRecords(_ row: Row) { checkErasure(row) }

    /// SPEC 3.5 in its order: the id's 100-character limit in the id's place, `ticket`, then a shared user (the
    /// SPEC's list here), all before the peer's right (the daemon's).
    static let erasureRows: [Row] = [
        Row("a ticket", erasure(#""ticket":"DSR-1""#), .valid(.erasure(ticket: "DSR-1"))),
        Row(
            "a ticket of 100 characters", erasure("\"ticket\":\"\(String(repeating: "t", count: 100))\""),
            .valid(.erasure(ticket: String(repeating: "t", count: 100)))),
        Row(
            "a ticket of 101 characters", erasure("\"ticket\":\"\(String(repeating: "t", count: 101))\""),
            .rejected(.invalidField, field: "ticket")),
        Row("ticket missing", erasure(""), .rejected(.missingField, field: "ticket")),
        Row("ticket null counts as absent", erasure(#""ticket":null"#), .rejected(.missingField, field: "ticket")),
        Row("ticket empty", erasure(#""ticket":"""#), .rejected(.invalidField, field: "ticket")),
        Row("ticket not a string", erasure(#""ticket":7"#), .rejected(.invalidField, field: "ticket")),
        Row(
            "ticket with a control character", erasure(#""ticket":"a\u0007""#),
            .rejected(.invalidField, field: "ticket")),
        Row(
            "an id of 100 characters",
            erasure(#""ticket":"t""#, id: "\"\(String(repeating: "e", count: 100))\""), .valid(.erasure(ticket: "t"))),
        Row(
            "an id of 101 characters is invalid in the id's place, before a bad ts",
            line(#""erasure""#, id: "\"\(String(repeating: "e", count: 101))\"", ts: #""soon""#, #""ticket":"t""#),
            .rejected(.invalidField, field: "id", id: String(repeating: "e", count: 101))),
        Row(
            "a shared user", erasure(#""ticket":"t""#, user: #""Anonymous""#), .rejected(.invalidField, field: "user")),
        Row(
            "a shared user without a ticket: the ticket first", erasure("", user: #""guest""#),
            .rejected(.missingField, field: "ticket")),
        Row(
            "a user that only starts like a shared one", erasure(#""ticket":"t""#, user: #""anonymous-7""#),
            .valid(.erasure(ticket: "t"))),
        Row(
            "an unknown member is kept", erasure(#""ticket":"t","requestedBy":{"team":"privacy"}"#),
            .valid(.erasure(ticket: "t"))),
    ]

    private func checkErasure(_ row: Row) {
        let verdict = RecordValidator.validate(Array(row.line.utf8), sharedUsers: .defaults)
        switch (row.expectation, verdict) {
        case (.valid(let body), .valid(let record)):
            #expect(record.body == body, "\(row.note)")
        case (.rejected(let code, let field, let id), .rejected(let rejectedID, let error)):
            #expect(error.code == code && error.field == field && rejectedID == id, "\(row.note): \(error)")
        default:
            Issue.record("\(row.note): \(verdict)")
        }
    }

    /// With `sharedUsers: []` the same id is a person like any other.
    @Test func aUserIsSharedOnlyByTheRulesInForce() {
        let line = Array(erasure(#""ticket":"t""#, user: #""anonymous""#).utf8)
        guard case .valid = RecordValidator.validate(line, sharedUsers: .none) else {
            Issue.record("an erasure of anonymous refused with sharedUsers []")
            return
        }
        guard case .rejected = RecordValidator.validate(line, sharedUsers: SharedUsers(["ANONYMOUS"])) else {
            Issue.record("an erasure of a listed id accepted")
            return
        }
    }
}
