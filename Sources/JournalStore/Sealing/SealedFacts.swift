import OfferTrackDomain
import SQLite

/// The records of sealed days that sealing keeps (SPEC 12, schema 17): each is its per-user index entry alone, whose
/// body holds every column attribution and `explain` read; its `records` row is gone. `sealed_ids` gives each one's
/// user key and time, so that its id still finds it (`explain --id`, a review's conversion, an `offerId`).
package enum SealedFacts {
    /// A kept record found by its id: its user's key and its index entry.
    package struct Found {
        package var key: Int64
        package var entry: UserIndexEntries.Entry
    }

    /// The kept record with this id; nil when sealing kept none by that id.
    package static func find(id: String, on connection: Connection) throws -> Found? {
        guard let hashKey = try JournalMeta(connection).value(SealState.hashKey).flatMap(SealedIDs.bytes(hex:))
        else { return nil }
        let select = try connection.prepare(static: "SELECT k, ts FROM sealed_ids WHERE hash = ?1 AND k IS NOT NULL")
        try select.bind(SealedIDs.hash(id, key: hashKey), at: 1)
        let place = try select.step() ? (key: select.int64(0), ts: select.int64(1)) : nil
        select.reset()
        guard let place, let entry = try UserIndexEntries.entry(id: id, key: place.key, ts: place.ts, on: connection)
        else { return nil }
        return Found(key: place.key, entry: entry)
    }

    /// Whether sealing kept the record `id` as its index entry alone.
    package static func isKept(id: String, on connection: Connection) throws -> Bool {
        guard let hashKey = try JournalMeta(connection).value(SealState.hashKey).flatMap(SealedIDs.bytes(hex:))
        else { return false }
        let select = try connection.prepare(static: "SELECT 1 FROM sealed_ids WHERE hash = ?1 AND k IS NOT NULL")
        try select.bind(SealedIDs.hash(id, key: hashKey), at: 1)
        defer { select.reset() }
        return try select.step()
    }

    /// Records that sealing kept the record `entry` of user `key` as its index entry alone (its `records` row is
    /// gone or about to go): its id's hash with where it is.
    package static func keep(_ entry: UserIndexEntries.Entry, key: Int64, hashKey: [UInt8], on connection: Connection)
        throws
    {
        let upsert = try connection.prepare(
            static: """
                INSERT INTO sealed_ids (hash, k, ts) VALUES (?1, ?2, ?3)
                ON CONFLICT (hash) DO UPDATE SET k = excluded.k, ts = excluded.ts
                """)
        try upsert.bind(SealedIDs.hash(entry.record.id, key: hashKey), at: 1)
        try upsert.bind(key, at: 2)
        try upsert.bind(entry.record.ts, at: 3)
        try upsert.run()
    }

    /// Records that sealing removed the record `id` altogether: its id's hash alone.
    package static func forget(id: String, hashKey: [UInt8], on connection: Connection) throws {
        let upsert = try connection.prepare(
            static: """
                INSERT INTO sealed_ids (hash) VALUES (?1)
                ON CONFLICT (hash) DO UPDATE SET k = NULL, ts = NULL
                """)
        try upsert.bind(SealedIDs.hash(id, key: hashKey), at: 1)
        try upsert.run()
    }

    /// Moves the kept records of user key `from` to `to` (two users merged by an erasure, SPEC 11).
    package static func move(from: Int64, to: Int64, on connection: Connection) throws {
        let move = try connection.prepare(static: "UPDATE sealed_ids SET k = ?2 WHERE k = ?1")
        try move.bind(from, at: 1)
        try move.bind(to, at: 2)
        try move.run()
    }
}
