import OfferTrackDomain
import SQLite
import Testing

@testable import JournalStore

/// The per-user index's record bodies (schema 15): the writer's encoding is byte for byte what SQL computes from the
/// same record's `records` row (the migration and `verify` use the SQL expression, `rebuild` the SQL function), and
/// it decodes back to the record.
@Suite struct IndexedRecordBodyTests {
    static let offer = Offer(affiliateToken: "aff-42", campaignToken: "spring", messageIdentifier: nil, itemID: "1:2")
    static let records: [(kind: UserIndexKind, record: Record)] = [
        (.lapsingCheck, Record(id: "c1", ts: 1, user: "u", body: .capabilities(.eligible))),
        (.lapsingCheck, Record(id: "c2", ts: 2, user: "u", body: .capabilities(.ineligible))),
        (.otherCheck, Record(id: "c3", ts: 3, user: "u", body: .capabilities(.unauthorized))),
        (.otherCheck, Record(id: "c4", ts: 4, user: "u", body: .capabilities(.subscriber))),
        (.loadedPresentation, Record(id: "p1", ts: 5, user: "u", body: .presented(offer, loaded: true))),
        (
            .unloadedPresentation,
            Record(
                id: "p2", ts: 6, user: "u",
                body: .presented(
                    Offer(affiliateToken: "", campaignToken: nil, messageIdentifier: "-", itemID: "12"), loaded: false))
        ),
        (
            .subscribed,
            Record(id: "o1", ts: 7, user: "u", body: .outcome(subscribed: true, decision: nil, offerId: nil))
        ),
        (
            .declined,
            Record(id: "o2", ts: 8, user: "u", body: .outcome(subscribed: false, decision: .eligible, offerId: "p1"))
        ),
        (
            .review,
            Record(
                id: "r1", ts: 9, user: "u",
                body: .review(Review(conversion: "o1", decision: .void, reason: .fraud, note: "3:é-\u{0}\n🙂")))
        ),
        (
            .review,
            Record(
                id: "r2", ts: 10, user: "u",
                body: .review(Review(conversion: "o1", decision: .hold, reason: nil, note: nil)))
        ),
        (.erasure, Record(id: "e1", ts: 11, user: "u", body: .erasure(ticket: "TICKET-7: ünïcode"))),
        (.erasure, Record(id: "e2", ts: 12, user: "u", body: .erasure(ticket: ""))),
    ]

    @Test func theWritersBodyIsWhatSQLComputesFromTheRecordsRow() throws {
        let connection = try Connection(path: ":memory:", mode: .readWriteCreate)
        try connection.execute(
            """
            CREATE TABLE records (seq INTEGER PRIMARY KEY, id TEXT, type INTEGER, ts INTEGER, decision INTEGER,
                subscribed INTEGER, loaded INTEGER, offer_id TEXT, affiliate_token TEXT, campaign_token TEXT,
                message_identifier TEXT, item_id TEXT, review_conversion TEXT, review_decision INTEGER,
                review_reason TEXT, review_note TEXT)
            """)
        for (_, record) in Self.records {
            // Fetched from the cache for each record, as the writer's: a parameter a record leaves unbound is NULL.
            let insert = try connection.prepare(
                static: """
                    INSERT INTO records (id, type, ts, decision, subscribed, loaded, offer_id, affiliate_token,
                        campaign_token, message_identifier, item_id, review_conversion, review_decision, review_reason,
                        review_note)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
                    """)
            try RecordQueries.bindColumns(of: record, to: insert, from: 1)
            try insert.run()
        }
        try IndexedRecordBody.defineFunction(on: connection)
        let select = try connection.prepare(
            """
            SELECT r.id, \(IndexedRecordBody.sql), \(IndexedRecordBody.functionCall) FROM records r ORDER BY r.seq
            """)
        var index = 0
        while try select.step() {
            let record = Self.records[index].record
            #expect(select.text(0) == record.id)
            #expect(select.bytes(1) == IndexedRecordBody.encode(record), "\(record)")
            #expect(select.bytes(2) == IndexedRecordBody.encode(record), "\(record): the function")
            index += 1
        }
        #expect(index == Self.records.count)
    }

    @Test func aBodyDecodesToItsRecord() {
        for (kind, record) in Self.records {
            let body = IndexedRecordBody.encode(record)
            #expect(IndexedRecordBody.record(kind: kind.rawValue, ts: record.ts, user: "u", body: body) == record)
        }
    }

    @Test(arguments: ["", "x", "2:c1", "2:c1-", "2:c17---------", "9:c1---------", "2:c1Z---------", "2:c1----------"])
    func aBodyThatDoesNotDecodeListsNoRecord(_ body: String) {
        #expect(IndexedRecordBody.record(kind: 0, ts: 1, user: "u", body: Array(body.utf8)) == nil)
    }
}
