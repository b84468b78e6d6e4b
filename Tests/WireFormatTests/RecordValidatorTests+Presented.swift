import Testing

@testable import OfferTrackDomain
@testable import WireFormat

/// SPEC 3.2: `offer.presented` records.
extension RecordValidatorTests {
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
}
