import OfferTrackDomain
import SQLite

/// A user's entries in every level of the per-user index with where each is (`kind`, `seq`, the level): what
/// sealing (SPEC 12) removes or moves entry by entry, and `verify` checks.
package enum UserIndexEntries {
    /// One entry of a user's per-user index: the record and where the entry is.
    package struct Entry {
        package var record: Record
        package var kind: Int64
        package var seq: Int64
        package var level: UserIndexLevel
        /// Whether its body is the one sealing writes for a kept entry (`SealedEntryBody`).
        package var sealedBody: Bool

        /// The entry of the row `select` holds (`kind, ts, body, seq, level`); nil when its body does not decode.
        fileprivate init?(_ select: Statement, user: String) {
            guard let record = RecordQueries.indexed(from: select, user: user, offset: 0) else { return nil }
            self.record = record
            kind = select.int64(0)
            seq = select.int64(3)
            level = UserIndexLevel(rawValue: select.int64(4)) ?? .main
            sealedBody = select.withBytes(2) { SealedEntryBody.isSealed($0) }
        }
    }

    /// A user's entries in every level of the per-user index, in `(ts, id)` order.
    package static func entries(of key: Int64, user: String = "", on connection: Connection) throws -> [Entry] {
        let select = try connection.prepare(
            static: """
                SELECT kind, ts, body, seq, 0 FROM by_user WHERE k = ?1
                UNION ALL SELECT kind, ts, body, seq, 1 FROM by_user_recent WHERE k = ?1
                UNION ALL SELECT kind, ts, body, seq, 2 FROM by_user_sealed WHERE k = ?1
                """)
        try select.bind(key, at: 1)
        defer { select.reset() }
        var entries: [Entry] = []
        while try select.step() {
            if let entry = Entry(select, user: user) { entries.append(entry) }
        }
        entries.sort { RecordOrder.precedes($0.record, $1.record) }
        return entries
    }

    /// The entry of the record `id` among those of user `key` at time `ts`; nil when none is there.
    package static func entry(id: String, key: Int64, ts: Int64, on connection: Connection) throws -> Entry? {
        let select = try connection.prepare(
            static: """
                SELECT kind, ts, body, seq, 2 FROM by_user_sealed WHERE k = ?1 AND kind IN (0, 1, 2, 3, 4, 5) AND ts = ?2
                UNION ALL SELECT kind, ts, body, seq, 0 FROM by_user WHERE k = ?1 AND kind IN (0, 1, 2, 3, 4, 5) AND ts = ?2
                UNION ALL SELECT kind, ts, body, seq, 1 FROM by_user_recent WHERE k = ?1 AND kind IN (0, 1, 2, 3, 4, 5) AND ts = ?2
                """)
        try select.bind(key, at: 1)
        try select.bind(ts, at: 2)
        defer { select.reset() }
        while try select.step() {
            if let entry = Entry(select, user: ""), ExactString.equals(entry.record.id, id) { return entry }
        }
        return nil
    }
}
