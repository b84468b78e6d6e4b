import Testing

@testable import OfferTrackDomain
@testable import WireFormat

/// SPEC 3.1: `capabilities` records.
extension RecordValidatorTests {
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
}
