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

    /// The key of the ids' hashes (`meta` `seal_key`); nil before the first seal.
    private static func hashKey(on connection: Connection) throws -> [UInt8]? {
        try JournalMeta(connection).value(SealState.hashKey).flatMap(SealedIDs.bytes(hex:))
    }

    /// The kept record with this id; nil when sealing kept none by that id.
    package static func find(id: String, on connection: Connection) throws -> Found? {
        guard let hashKey = try hashKey(on: connection) else { return nil }
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
        guard let hashKey = try hashKey(on: connection) else { return false }
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
        try keep(id: entry.record.id, ts: entry.record.ts, key: key, hashKey: hashKey, on: connection)
    }

    /// As `keep(_:key:hashKey:on:)`, for the record `id` at `ts` listed under user `key`.
    package static func keep(id: String, ts: Int64, key: Int64, hashKey: [UInt8], on connection: Connection) throws {
        let upsert = try connection.prepare(
            static: """
                INSERT INTO sealed_ids (hash, k, ts) VALUES (?1, ?2, ?3)
                ON CONFLICT (hash) DO UPDATE SET k = excluded.k, ts = excluded.ts
                """)
        try upsert.bind(SealedIDs.hash(id, key: hashKey), at: 1)
        try upsert.bind(key, at: 2)
        try upsert.bind(ts, at: 3)
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

    /// Moves the kept records of user key `from` to `to` (two users merged by an erasure, SPEC 11). Each is an
    /// index entry of `from` before `sealedBefore` (other than a review or an erasure, which are never sealed) whose
    /// id's hash names `from`: call it before the entries move.
    package static func move(from: Int64, to: Int64, sealedBefore: Int64, on connection: Connection) throws {
        guard let hashKey = try hashKey(on: connection) else { return }
        let select = try connection.prepare(
            static: """
                SELECT kind, ts, body FROM by_user WHERE k = ?1 AND kind IN (0, 1, 2, 3, 4, 5) AND ts < ?2
                UNION ALL
                SELECT kind, ts, body FROM by_user_recent WHERE k = ?1 AND kind IN (0, 1, 2, 3, 4, 5) AND ts < ?2
                UNION ALL
                SELECT kind, ts, body FROM by_user_sealed WHERE k = ?1 AND kind IN (0, 1, 2, 3, 4, 5) AND ts < ?2
                """)
        try select.bind(from, at: 1)
        try select.bind(sealedBefore, at: 2)
        var ids: [String] = []
        while try select.step() {
            if let record = RecordQueries.indexed(from: select, user: "", offset: 0) { ids.append(record.id) }
        }
        select.reset()
        let move = try connection.prepare(static: "UPDATE sealed_ids SET k = ?2 WHERE hash = ?1 AND k = ?3")
        for id in ids {
            try move.bind(SealedIDs.hash(id, key: hashKey), at: 1)
            try move.bind(to, at: 2)
            try move.bind(from, at: 3)
            try move.run()
        }
    }

    /// A loaded presentation of a sealed day whose rule 4.4 verdict changes when two users merge: the sealed day
    /// counted it as `before` says.
    package struct EligibilityChange: Sendable {
        package var before: PresentationFact
        package var eligibleNow: Bool
    }

    /// Two users about to merge (SPEC 11): the loaded presentations of sealed days, of either, whose eligibility
    /// the other's `capabilities` records change, so that the sealed days' counts can follow (a journal never
    /// sealed recomputes them). Each presentation sealing kept has its eligibility record kept too, so its verdict
    /// apart is the counted one; merged, only the kept checks are read (docs/retention.md: the case this cannot
    /// see).
    package static func eligibilityChanges(
        merging from: Int64, into to: Int64, state: SealState, on connection: Connection
    )
        throws -> [EligibilityChange]
    {
        let settings = AttributionSettings(windowMs: state.windowMs, freshnessMs: state.freshnessMs)
        let sides = try [from, to].map { try UserIndexEntries.entries(of: $0, on: connection).map(\.record) }
        let merged = Attribution.attribute(userRecords: sides[0] + sides[1], settings: settings).presentations
        var now: [ExactString: Bool] = [:]
        for fact in merged where fact.ts < state.sealedBefore { now[ExactString(fact.id)] = fact.eligible }
        var changes: [EligibilityChange] = []
        for side in sides {
            for fact in Attribution.attribute(userRecords: side, settings: settings).presentations
            where fact.ts < state.sealedBefore {
                guard let eligible = now[ExactString(fact.id)], eligible != fact.eligible else { continue }
                changes.append(EligibilityChange(before: fact, eligibleNow: eligible))
            }
        }
        return changes
    }

    /// After two users merged (SPEC 11): the merged user's records of sealed days that sealing kept for one side
    /// and that no rule reads any more (each side's latest check, say) leave the index, their ids kept as those of
    /// removed records and their number added to the user's count, as a seal would have done. A sealed record
    /// whose `records` row is still there is left to the next seal, which cleans it.
    package static func trim(key: Int64, sealedBefore: Int64, on connection: Connection) throws {
        guard let hashKey = try hashKey(on: connection) else { return }
        let entries = try UserIndexEntries.entries(of: key, on: connection)
        let kept = SealKeeping.kept(entries.map(\.record), sealedBefore: sealedBefore)
        let hasRow = try connection.prepare(static: "SELECT 1 FROM records WHERE seq = ?1")
        var removed: Int64 = 0
        for (position, entry) in entries.enumerated()
        where entry.record.ts < sealedBefore && !SealKeeping.isNeverSealed(entry.record) && !kept.contains(position) {
            try hasRow.bind(entry.seq, at: 1)
            let present = try hasRow.step()
            hasRow.reset()
            guard !present else { continue }
            try dropIndexEntry(entry, key: key, on: connection)
            try forget(id: entry.record.id, hashKey: hashKey, on: connection)
            removed += 1
        }
        if removed > 0 { try countRemoved(removed, key: key, on: connection) }
    }

    /// Moves a kept record's entry into the sealed level of the per-user index (`UserIndexLevel.sealed`) with its
    /// sealed body (`SealedEntryBody`), or rewrites its body there. Call it only once the record's `records` row is
    /// gone (`verify` compares the body of an entry with a row against the row).
    package static func moveToSealedLevel(_ entry: UserIndexEntries.Entry, key: Int64, on connection: Connection)
        throws
    {
        guard entry.level != .sealed || !entry.sealedBody, let body = SealedEntryBody.encode(entry.record) else {
            return
        }
        if entry.level != .sealed { try dropIndexEntry(entry, key: key, on: connection) }
        let insert = try connection.prepare(
            static: "INSERT OR REPLACE INTO by_user_sealed (k, kind, ts, seq, body) VALUES (?1, ?2, ?3, ?4, ?5)")
        try insert.bind(key, at: 1)
        try insert.bind(entry.kind, at: 2)
        try insert.bind(entry.record.ts, at: 3)
        try insert.bind(entry.seq, at: 4)
        try insert.bindBlob(body, at: 5)
        try insert.run()
    }

    /// Removes a sealed record's entry from its level of the per-user index.
    package static func dropIndexEntry(_ entry: UserIndexEntries.Entry, key: Int64, on connection: Connection) throws {
        let sql: StaticString =
            switch entry.level {
            case .main: "DELETE FROM by_user WHERE k = ?1 AND kind = ?2 AND ts = ?3 AND seq = ?4"
            case .recent: "DELETE FROM by_user_recent WHERE k = ?1 AND kind = ?2 AND ts = ?3 AND seq = ?4"
            case .sealed: "DELETE FROM by_user_sealed WHERE k = ?1 AND kind = ?2 AND ts = ?3 AND seq = ?4"
            }
        let drop = try connection.prepare(static: sql)
        try drop.bind(key, at: 1)
        try drop.bind(entry.kind, at: 2)
        try drop.bind(entry.record.ts, at: 3)
        try drop.bind(entry.seq, at: 4)
        try drop.run()
    }

    /// Adds `count` to the number of user `key`'s records that sealing removed (`explain`'s `records` counts them).
    package static func countRemoved(_ count: Int64, key: Int64, on connection: Connection) throws {
        let upsert = try connection.prepare(
            static: """
                INSERT INTO sealed_users (k, records) VALUES (?1, ?2)
                ON CONFLICT (k) DO UPDATE SET records = records + excluded.records
                """)
        try upsert.bind(key, at: 1)
        try upsert.bind(count, at: 2)
        try upsert.run()
    }
}
