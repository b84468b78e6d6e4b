import OfferTrackDomain
import Testing

@testable import JournalStore

/// The bodies sealing writes for the entries it keeps (`SealedEntryBody`, `PackedText`): bytes worked out by hand
/// for each shape of text, malformed fields refused, and every record of a sealable kind read back as it was.
@Suite struct SealedEntryBodyTests {
    static func packed(_ text: String?) -> [UInt8] {
        var bytes: [UInt8] = []
        PackedText.append(text, to: &bytes)
        return bytes
    }

    static func unpacked(_ bytes: [UInt8]) -> String?? {
        bytes.withUnsafeBytes { buffer in
            var reader = PackedText.Reader(bytes: buffer, position: 0)
            let text = reader.text()
            return reader.atEnd ? text : nil
        }
    }

    /// Header: 0 absent, else 1 + (length << 2 | shape), LEB128; shapes 0 UTF-8, 1 base32, 2 and 3 a UUID.
    @Test(
        arguments: [
            (nil, [0]),
            ("", [1]),
            ("ABC", [13, 0x41, 0x42, 0x43]),  // base32 letters, but fewer than 8: as they are
            ("é", [9, 0xC3, 0xA9]),
            ("00000000", [34, 0, 0, 0, 0, 0]),  // 1 + (8 << 2 | 1); 40 bits
            ("10000000", [34, 0x08, 0, 0, 0, 0]),  // 00001 then 35 zero bits
            ("0000000Z", [34, 0, 0, 0, 0, 0x1F]),  // Z is 31: the last 5 bits
            ("ZZZZZZZZ", [34, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            ("000000001", [38, 0, 0, 0, 0, 0, 0x08]),  // 9 characters: 45 bits, then 3 zero bits of padding
            ("0000000o", [33, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x6F]),  // a small letter: UTF-8
            ("00000000-0000-0000-0000-000000000001", [3] + [UInt8](repeating: 0, count: 15) + [1]),  // digits: lower
            (
                "0000abcd-0000-0000-0000-0000000000ff",
                [3, 0, 0, 0xAB, 0xCD] + [UInt8](repeating: 0, count: 11) + [0xFF]
            ),
            (
                "0000ABCD-0000-0000-0000-0000000000FF",
                [4, 0, 0, 0xAB, 0xCD] + [UInt8](repeating: 0, count: 11) + [0xFF]
            ),
        ] as [(String?, [UInt8])])
    func textsArePackedAsWorkedOutByHand(text: String?, bytes: [UInt8]) {
        #expect(Self.packed(text) == bytes)
        #expect(Self.unpacked(bytes) == .some(text))
    }

    /// A UUID in both cases, or with a dash out of place, is kept as its UTF-8 bytes (36: header 1 + 144 = 145).
    @Test(arguments: ["0000abcd-0000-0000-0000-0000000000FF", "0000abcd00000-0000-0000-0000000000ff"])
    func aTextOfNoShapeIsKeptAsItsBytes(text: String) {
        #expect(Self.packed(text) == [0x91, 0x01] + Array(text.utf8))
        #expect(Self.unpacked(Self.packed(text)) == .some(text))
    }

    @Test(
        arguments: [
            [0x80],  // a header cut short
            [34, 0, 0, 0, 0],  // 8 base32 characters need 5 bytes
            [38, 0, 0, 0, 0, 0, 0x81],  // padding bits not zero
            [7, 0],  // a UUID with a length
            [3, 0, 0, 0],  // a UUID cut short
            [13, 0x41],  // three bytes announced, one there
        ] as [[UInt8]])
    func aMalformedTextIsRefused(bytes: [UInt8]) {
        #expect(Self.unpacked(bytes) == nil)
    }

    static let ulid = "01M6AM56JF00001DXQ"
    static let sealable: [(kind: UserIndexKind, record: Record)] = [
        (.lapsingCheck, Record(id: ulid, ts: 1, user: "u", body: .capabilities(.eligible))),
        (.otherCheck, Record(id: "c-1", ts: 2, user: "u", body: .capabilities(.subscriber))),
        (
            .loadedPresentation,
            Record(
                id: "9B2F0C3A-11D4-4E6B-A0C2-5D1E7F3B9A10", ts: 3, user: "u",
                body: .presented(
                    Offer(
                        affiliateToken: "1010LKXY", campaignToken: "été 2026", messageIdentifier: "playMusic",
                        itemID: "1440857781"),
                    loaded: true))
        ),
        (
            .unloadedPresentation,
            Record(
                id: "p2", ts: 4, user: "u",
                body: .presented(
                    Offer(affiliateToken: nil, campaignToken: nil, messageIdentifier: nil, itemID: nil), loaded: false))
        ),
        (
            .subscribed,
            Record(id: "s", ts: 5, user: "u", body: .outcome(subscribed: true, decision: nil, offerId: ulid))
        ),
        (
            .declined,
            Record(id: "d", ts: 6, user: "u", body: .outcome(subscribed: false, decision: .ineligible, offerId: nil))
        ),
    ]

    @Test func everySealableRecordIsReadBackAsItWas() throws {
        for (kind, record) in Self.sealable {
            let body = try #require(SealedEntryBody.encode(record))
            #expect(body.first == SealedEntryBody.marker)
            // Read through the index's decoder, as every reader of an entry does.
            #expect(IndexedRecordBody.record(kind: kind.rawValue, ts: record.ts, user: "u", body: body) == record)
            #expect(body.count < IndexedRecordBody.encode(record).count)
        }
    }

    /// A check of a ULID-like id: marker, header 1 + (18 << 2 | 1) = 74, 12 bytes of base32, the decision's code.
    @Test func aChecksBodyIsFifteenBytes() throws {
        let body = try #require(SealedEntryBody.encode(Self.sealable[0].record))
        #expect(body.count == 15)
        #expect(Array(body.prefix(2)) == [SealedEntryBody.marker, 74])
        #expect(body.last == 2)
    }

    @Test func reviewsAndErasuresHaveNoSealedBody() {
        let review = Review(conversion: "s", decision: .void, reason: .fraud, note: nil)
        #expect(SealedEntryBody.encode(Record(id: "r", ts: 1, user: "u", body: .review(review))) == nil)
        #expect(SealedEntryBody.encode(Record(id: "e", ts: 1, user: "u", body: .erasure(ticket: "t"))) == nil)
    }

    /// A sealed body read as another kind, cut short or with bytes after it is no record.
    @Test func aSealedBodyOfTheWrongShapeIsNoRecord() throws {
        let check = try #require(SealedEntryBody.encode(Self.sealable[0].record))
        let presentation = try #require(SealedEntryBody.encode(Self.sealable[2].record))
        #expect(
            IndexedRecordBody.record(kind: UserIndexKind.loadedPresentation.rawValue, ts: 1, user: "u", body: check)
                == nil)
        #expect(IndexedRecordBody.record(kind: 0, ts: 3, user: "u", body: presentation) == nil)
        #expect(IndexedRecordBody.record(kind: 0, ts: 1, user: "u", body: Array(check.dropLast())) == nil)
        #expect(IndexedRecordBody.record(kind: 0, ts: 1, user: "u", body: check + [0]) == nil)
        #expect(IndexedRecordBody.record(kind: 0, ts: 1, user: "u", body: Array(check.dropLast()) + [9]) == nil)
    }
}
