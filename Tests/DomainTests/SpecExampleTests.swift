import Testing
import WireFormat

@testable import OfferTrackDomain

/// SPEC section 9's example lines, verbatim, and what the SPEC says of them.
@Suite struct SpecExampleTests {
    static let lines = [
        #"{"type":"capabilities","id":"01JDX3K7Q8A1","ts":"2026-11-28T10:14:58.120Z","user":"u-9f2c","authorization":"authorized","capabilities":["musicCatalogSubscriptionEligible","addToCloudMusicLibrary"]}"#,
        #"{"type":"capabilities","id":"01JDX3K7Q8A2","ts":"2026-11-28T10:14:58Z","user":"u-77aa","authorization":3,"capabilities":257}"#,
        #"{"type":"capabilities","id":"01JDX3K7Q8A3","ts":"2026-11-28T11:14:58+01:00","user":"u-41bd","authorization":"authorized","subscription":{"canPlayCatalogContent":false,"canBecomeSubscriber":true,"hasCloudLibraryEnabled":false}}"#,
        #"{"type":"offer.presented","id":"01JDX3K9M2B1","ts":"2026-11-28T10:15:00Z","user":"u-9f2c","app":"com.example.radio","offer":{"action":"subscribe","affiliateToken":"1010lKxy","campaignToken":"spring26","messageIdentifier":"playMusic","itemID":"1440857781"}}"#,
        #"{"type":"subscription.outcome","id":"01JDX3M1C4D1","ts":"2026-11-28T10:17:41Z","user":"u-9f2c","capabilities":["musicCatalogPlayback","addToCloudMusicLibrary"],"offerId":"01JDX3K9M2B1"}"#,
    ]

    static let badLine =
        #"{"type":"offer.presented","id":"01JDX3K9M2B2","ts":"2026-11-28T10:16:00Z","user":"u-41bd","offer":{"action":"subscribe","campaignToken":"a&b"}}"#

    @Test func acceptsTheExampleRecordsWithTheirDecisions() {
        let verdicts = Self.lines.map { RecordValidator.validate(Array($0.utf8)) }
        let expected: [Record] = [
            Record(id: "01JDX3K7Q8A1", ts: 1_795_860_898_120, user: "u-9f2c", body: .capabilities(.eligible)),
            Record(id: "01JDX3K7Q8A2", ts: 1_795_860_898_000, user: "u-77aa", body: .capabilities(.subscriber)),
            Record(id: "01JDX3K7Q8A3", ts: 1_795_860_898_000, user: "u-41bd", body: .capabilities(.eligible)),
            Record(
                id: "01JDX3K9M2B1", ts: 1_795_860_900_000, user: "u-9f2c",
                body: .presented(
                    Offer(
                        affiliateToken: "1010lKxy", campaignToken: "spring26", messageIdentifier: "playMusic",
                        itemID: "1440857781"),
                    loaded: true)),
            Record(
                id: "01JDX3M1C4D1", ts: 1_795_861_061_000, user: "u-9f2c",
                body: .outcome(subscribed: true, decision: .subscriber, offerId: "01JDX3K9M2B1")),
        ]
        #expect(verdicts == expected.map { .valid($0) })
        // "2 min 41 s after it, whose user was checked eligible 1.88 s before it".
        #expect(expected[4].ts - expected[3].ts == 161_000)
        #expect(expected[3].ts - expected[0].ts == 1_880)
    }

    @Test func rejectsTheBadExampleLineExactly() {
        let verdict = RecordValidator.validate(Array(Self.badLine.utf8))
        let error = RecordError(
            .invalidField, "offer.campaignToken may not contain ?, ! or &", field: "offer.campaignToken")
        #expect(verdict == .rejected(id: "01JDX3K9M2B2", error))
        #expect(error.code.rawValue == "invalid_field")
    }
}
