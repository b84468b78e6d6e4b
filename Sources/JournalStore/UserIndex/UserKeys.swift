import OfferTrackDomain
import SQLite

/// Users' integer keys (schema 8) and the per-user index on them (schema 10): each user is given a key the first
/// time one of their records is journaled, and every record is listed under it, first in `by_user_recent` by the
/// batch that journals it, later in `by_user` (k, kind, ts, seq, then its record's columns: `UserIndexColumns`);
/// the records of a user the batch gives their key to, straight in `by_user`, after all of its entries.
///
/// Two levels because returning users' records land all over the index: a batch of 2,000 records listed straight
/// in `by_user` dirties about as many of its pages, each copied whole into the WAL at commit. `by_user_recent`
/// holds only the entries of the last round of slices (16 commits, up to 4,096 on a long journal, and about
/// `roundRecords` records at most: a batch's slices are counted up), so a batch dirties few of its pages; and each
/// commit moves the entries of one slice of the keys (a sixteenth of them, fewer once the journal is long:
/// `slices(forRecords:)`), or of as many as its records need (`roundRecords`), into `by_user` together, many to a
/// page. Every entry is moved within a
/// round of slices: that many commits while the number of users is steady, a few more while many new users arrive
/// (the slices widen as keys are given). A writer's first slice starts at the oldest key the recent level holds,
/// so entries a previous writer left (a crash, a stop) go first. Both levels are ordinary tables written in the
/// batch's transaction, so they are exactly as durable as the records; a reader reads a user's entries from both.
package enum UserKeys {
    /// Commits a full round of the keys takes at least: each moves the entries of one slice out of `by_user_recent`.
    static let fewestSlices: Int64 = 16
    /// …and at most.
    static let mostSlices: Int64 = 4096
    /// Records journaled for each slice of a round, past the fewest.
    static let recordsPerSlice: Int64 = 8192
    /// Records a round of slices holds at most, however many records each commit brings: about 18 MB of entries,
    /// within the writer's 32 MiB page cache. Counted in commits alone, a fill's commits of 65,536 records left
    /// 7.65 of 10.1 million entries in the recent level (bench/CHANGELOG.md, 2026-12-07); a first value, not tuned.
    static let roundRecords: Int64 = 262_144

    /// The rules above in a few characters (round, fewest and most slices, records a slice): a journal filled under
    /// other rules lays its index out otherwise, so the bench's kept fills carry it in their names.
    package static let layoutName = "r\(roundRecords)s\(fewestSlices)-\(mostSlices)-\(recordsPerSlice)"

    /// The slices of a round once `records` records were journaled: 16 up to 139,263, then one more for each 8,192
    /// more, up to 4,096 (from 33,554,432). The longer users' histories, the larger `by_user` and the fewer of its
    /// leaves the writer's cache holds, so entries wait longer in the recent level and a user's move together, to
    /// one leaf (300,000 returning records of 50,000 users after 10,000,000 of theirs, bytes written and daemon CPU
    /// a record: 16 slices 14,323 and 45.7 µs, 64: 11,297 and 40.8, 256: 7,502 and 39.3, 1,024: 6,181 and 35.4,
    /// 4,096: 5,808 and 33.3; after 100,000: 2,695 and 16.7 µs with 16 slices, 4,008 and 19.1 with 256).
    static func slices(forRecords records: Int64) -> Int64 {
        min(mostSlices, max(fewestSlices, records / recordsPerSlice))
    }

    /// `user`'s key, given now (in the caller's transaction) if the user has none yet. Keys are rowids of
    /// `users`, so they are never reused.
    static func key(of user: String, on connection: Connection) throws -> Int64 {
        if let key = try existingKey(of: user, on: connection) { return key }
        let add = try connection.prepare(static: "INSERT INTO users (user) VALUES (?1)")
        try add.bind(user, at: 1)
        try add.run()
        return connection.lastInsertRowID
    }

    /// Gives `user` a key (in the caller's transaction) and returns it; nil when the user already has one. For a
    /// user the writer believes new: one insert instead of a search and an insert.
    static func addKey(of user: String, on connection: Connection) throws -> Int64? {
        let add = try connection.prepare(static: "INSERT OR IGNORE INTO users (user) VALUES (?1)")
        try add.bind(user, at: 1)
        try add.run()
        return connection.changes == 1 ? connection.lastInsertRowID : nil
    }

    /// The user listed under `key`; nil when no user has it.
    package static func name(of key: Int64, on connection: Connection) throws -> String? {
        let select = try connection.prepare(static: "SELECT user FROM users WHERE k = ?1")
        try select.bind(key, at: 1)
        defer { select.reset() }
        return try select.step() ? select.text(0) : nil
    }

    /// `user`'s key; nil when the user has none (no record of theirs is journaled).
    package static func existingKey(of user: String, on connection: Connection) throws -> Int64? {
        let find = try connection.prepare(static: "SELECT k FROM users WHERE user = ?1")
        try find.bind(user, at: 1)
        defer { find.reset() }
        return try find.step() ? find.int64(0) : nil
    }

    /// The key the next user will be given: every key from it on is given after this call.
    package static func nextKey(on connection: Connection) throws -> Int64 {
        let last = try connection.prepare(static: "SELECT coalesce(max(k), 0) FROM users")
        defer { last.reset() }
        return try (last.step() ? last.int64(0) : 0) + 1
    }

    /// Lists `record`, journaled as `seq`, of `kind`, under its user's key `k`, with its body (schema 15,
    /// `IndexedRecordBody`): in the recent level, or straight in `by_user` when `key` is at least `freshFrom`
    /// (`nextKey` at the batch's start). A key given in the batch is larger than every key `by_user` lists, so
    /// its entries go after all of them, on the last pages, which the batch's other new users' entries fill
    /// too: moving them later would only write them twice.
    static func index(
        _ record: Record, seq: Int64, kind: UserIndexKind, key: Int64, freshFrom: Int64, on connection: Connection
    ) throws {
        let insert =
            key >= freshFrom
            ? try connection.prepare(static: "INSERT INTO by_user (k, kind, ts, seq, body) VALUES (?1, ?2, ?3, ?4, ?5)")
            : try connection.prepare(
                static: "INSERT INTO by_user_recent (k, kind, ts, seq, body) VALUES (?1, ?2, ?3, ?4, ?5)")
        try insert.bind(key, at: 1)
        try insert.bind(kind.rawValue, at: 2)
        try insert.bind(record.ts, at: 3)
        try insert.bind(seq, at: 4)
        try insert.bindBlob(IndexedRecordBody.encode(record), at: 5)
        try insert.run()
    }

    /// Moves the recent entries of keys from `cursor` on (nil: from the smallest key the recent level holds), a
    /// `slices(forRecords: lastSeq)`-th of the keys given so far, into `by_user` (in the caller's transaction); a
    /// batch of `batchRecords` records moves as many such slices as a round of `roundRecords` records gives it.
    /// Returns the cursor of the next slice, back at the first key after the last.
    /// An entry `by_user` already holds (listed twice, which `verify` reports) is dropped from the recent level
    /// instead of failing every later batch.
    package static func moveSlice(
        from cursor: Int64?, lastSeq: Int64, batchRecords: Int64, on connection: Connection
    ) throws -> Int64 {
        let lastKey = try nextKey(on: connection) - 1
        let from = try cursor ?? oldestRecentKey(on: connection)
        let start = from > lastKey ? 0 : from
        let slices = slices(forRecords: lastSeq)
        // A round holds at most `roundRecords` records whatever the batches' size: a large batch moves as many
        // slices as its records need.
        let count = max(1, (batchRecords * slices + roundRecords - 1) / roundRecords)
        let end = start + count * (lastKey / slices + 1)
        let move = try connection.prepare(
            static: """
                INSERT OR IGNORE INTO by_user SELECT * FROM by_user_recent WHERE k >= ?1 AND k < ?2
                """)
        let forget = try connection.prepare(static: "DELETE FROM by_user_recent WHERE k >= ?1 AND k < ?2")
        for statement in [move, forget] {
            try statement.bind(start, at: 1)
            try statement.bind(end, at: 2)
            try statement.run()
        }
        return end
    }

    /// The smallest key the recent level lists (0 when it is empty).
    private static func oldestRecentKey(on connection: Connection) throws -> Int64 {
        let oldest = try connection.prepare(static: "SELECT coalesce(min(k), 0) FROM by_user_recent")
        defer { oldest.reset() }
        return try oldest.step() ? oldest.int64(0) : 0
    }

    /// Lists every record under its user's key again from `records` (`offertrack rebuild`): keys of users with
    /// records are kept, users without records are forgotten, users without a key are given one. What sealing kept
    /// of sealed days (entries without a record, `SealedFacts`) cannot be rebuilt and stays (in `by_user_sealed`,
    /// or in `by_user` while a seal has not moved it there), with its users and their keys. Two scans
    /// of `records`: one for the users who have records (into a temporary table, which both changes to `users`
    /// then read instead of `records`), one for the entries, which are sorted before they are inserted, so the
    /// index is written in order, all of it in `by_user`.
    package static func rebuild(on connection: Connection) throws {
        try IndexedRecordBody.defineFunction(on: connection)
        // What sealing kept: entries of sealed days without a record. Any other entry is listed again, or dropped.
        let sealedBefore = try SealState.read(on: connection)?.sealedBefore
        func kept(_ table: String) -> String {
            sealedBefore.map {
                "\(table).ts < \($0) AND NOT EXISTS (SELECT 1 FROM records r WHERE r.seq = \(table).seq)"
            } ?? "0"
        }
        try connection.execute(
            """
            DELETE FROM by_user WHERE NOT (\(kept("by_user")));
            INSERT INTO by_user (\(UserIndexColumns.all)) SELECT \(UserIndexColumns.all) FROM by_user_recent
                WHERE \(kept("by_user_recent"));
            DELETE FROM by_user_recent;
            DROP TABLE IF EXISTS temp.rebuild_users;
            CREATE TEMP TABLE rebuild_users (user TEXT PRIMARY KEY) WITHOUT ROWID;
            INSERT OR IGNORE INTO rebuild_users SELECT user FROM records;
            INSERT OR IGNORE INTO rebuild_users SELECT u.user FROM users u WHERE EXISTS (SELECT 1 FROM by_user b WHERE b.k = u.k)
                OR EXISTS (SELECT 1 FROM by_user_sealed b WHERE b.k = u.k) OR EXISTS (SELECT 1 FROM sealed_users s WHERE s.k = u.k);
            DELETE FROM users WHERE user NOT IN rebuild_users;
            INSERT INTO users (user) SELECT user FROM rebuild_users WHERE user NOT IN (SELECT user FROM users)
                ORDER BY user;
            DROP TABLE rebuild_users;
            INSERT INTO by_user (\(UserIndexColumns.all))
                SELECT \(UserIndexColumns.fromRecordsByFunction) FROM records r JOIN users u ON u.user = r.user
                ORDER BY 1, 2, 3, 4;
            """)
    }
}
