import JSON
import OfferTrackDomain
import SQLite

/// How an erasure's rename of a person's journaled records is split (SPEC 11, schema 13). The daemon renames at
/// most `rowsInBatch` records in the erasure's own batch and the rest in chunks between later batches
/// (`JournalWriter.continuePendingRenames`); every other writer renames them all in the batch, as before.
public struct RenameTuning: Sendable, Equatable {
    /// Records renamed in the erasure's batch (nil: all of them, in its transaction).
    public var rowsInBatch: Int?
    /// At most this many records a chunk (a chunk also ends at its deadline).
    public var rowsPerChunk: Int
    /// The daemon answers an erasure once at most this many of its person's records are left to rename (about:
    /// `PendingRename.point(leaving:on:)`), so that the rest, renamed in chunks after the answer, takes well
    /// under SPEC 11's 60 s whatever the other traffic; a larger person's erasure is answered once the chunks got
    /// that far.
    public var rowsLeftAtAnswer: Int

    /// The daemon's default: a person with up to 2,000 records is renamed in the erasure's batch, as before.
    public static let defaultRowsInBatch = 2000
    /// The daemon's default: see `rowsLeftAtAnswer`, and docs/reviews-payouts-erasure.md for the rates behind it.
    public static let defaultRowsLeftAtAnswer = 100_000
    /// The daemon's tuning.
    public static let daemon = RenameTuning(rowsInBatch: defaultRowsInBatch)

    public init(
        rowsInBatch: Int? = nil, rowsPerChunk: Int = 20_000, rowsLeftAtAnswer: Int = defaultRowsLeftAtAnswer
    ) {
        self.rowsInBatch = rowsInBatch
        self.rowsPerChunk = rowsPerChunk
        self.rowsLeftAtAnswer = rowsLeftAtAnswer
    }

    #if OFFERTRACK_FAULT_HOOKS
        /// The environment variables the daemon's executable reads the test hooks from (debug builds only).
        public static let killAfterChunkVariable = "OFFERTRACK_TEST_RENAME_KILL_AFTER_CHUNK"
        public static let rowsPerChunkVariable = "OFFERTRACK_TEST_RENAME_ROWS_PER_CHUNK"
        public static let oneTransactionVariable = "OFFERTRACK_TEST_RENAME_IN_ONE_TRANSACTION"
        public static let failChunksVariable = "OFFERTRACK_TEST_RENAME_FAIL_CHUNKS"
        /// Sets `rowsLeftAtAnswer` (0: an erasure is answered only after its whole rename, as before issue 47).
        public static let rowsLeftAtAnswerVariable = "OFFERTRACK_TEST_RENAME_ROWS_LEFT_AT_ANSWER"
        /// Test hook: SIGKILL the daemon once this many chunks have committed.
        public var killAfterChunk: Int?
        /// Test hook: the daemon's first this many chunks fail before they begin, as a journal that cannot be
        /// written would make them.
        public var failChunks = 0

        /// The daemon's tuning, with the test hooks from `variable` (the executable's environment; the tests'
        /// baseline renames in one transaction, as before schema 13).
        public init(daemon variable: (String) -> String?) {
            let rows = variable(Self.rowsPerChunkVariable).flatMap { Int($0) }
            let inBatch = rows.map { min($0, Self.defaultRowsInBatch) } ?? Self.defaultRowsInBatch
            self.init(
                rowsInBatch: variable(Self.oneTransactionVariable) == "1" ? nil : inBatch, rowsPerChunk: rows ?? 20_000)
            rowsLeftAtAnswer =
                variable(Self.rowsLeftAtAnswerVariable).flatMap { Int($0) } ?? Self.defaultRowsLeftAtAnswer
            killAfterChunk = variable(Self.killAfterChunkVariable).flatMap { Int($0) }
            failChunks = variable(Self.failChunksVariable).flatMap { Int($0) } ?? 0
        }
    #endif
}

/// An erasure's rename that did not fit in its batch (`pending_renames`): every record listed under user key `k`
/// is to be named `name`, and those up to `after` in the key's per-user index order `(kind, ts, seq)` are. The
/// `users` entry is renamed in the erasure's batch, and records of the person that arrive later are renamed before
/// they are journaled, so only records journaled before the erasure wait here; attribution reads them by key,
/// which the rename keeps, so no amount depends on how far it got. The person's old name is stored nowhere.
package struct PendingRename {
    /// Schema 13: the renames in progress, one row a key.
    static let migration = """
        CREATE TABLE pending_renames (
            k INTEGER PRIMARY KEY, name TEXT NOT NULL, kind INTEGER NOT NULL, ts INTEGER NOT NULL,
            seq INTEGER NOT NULL);
        """

    /// A place in a key's per-user index order `(kind, ts, seq)`.
    package struct Position: Comparable, Sendable {
        var kind: Int64
        var ts: Int64
        var seq: Int64
        static let start = Position(kind: .min, ts: .min, seq: .min)

        package static func < (lhs: Position, rhs: Position) -> Bool {
            (lhs.kind, lhs.ts, lhs.seq) < (rhs.kind, rhs.ts, rhs.seq)
        }
    }

    package let key: Int64
    let name: String
    /// How far the rename got: the records up to here are renamed.
    package internal(set) var after: Position

    /// Every pending rename, by key.
    package static func all(on connection: Connection) throws -> [PendingRename] {
        let select = try connection.prepare(static: "SELECT k, name, kind, ts, seq FROM pending_renames ORDER BY k")
        defer { select.reset() }
        var renames: [PendingRename] = []
        while try select.step() {
            let after = Position(kind: select.int64(2), ts: select.int64(3), seq: select.int64(4))
            renames.append(PendingRename(key: select.int64(0), name: select.text(1) ?? "", after: after))
        }
        return renames
    }

    /// The place in the key's index order past which at most `rowsLeft` of its records listed after `after`
    /// remain to be renamed (read from the main level of the per-user index, which lists all but the last few
    /// batches' entries: at most `rowsLeft` and a few); nil when no more than that many remain now. It reads at
    /// most `rowsLeft + 1` index entries.
    package func point(leaving rowsLeft: Int, on connection: Connection) throws -> Position? {
        let select = try connection.prepare(
            static: """
                SELECT kind, ts, seq FROM by_user WHERE k = ?1 AND (kind, ts, seq) > (?2, ?3, ?4)
                ORDER BY kind DESC, ts DESC, seq DESC LIMIT 1 OFFSET ?5
                """)
        try select.bind(key, at: 1)
        try select.bind(after.kind, at: 2)
        try select.bind(after.ts, at: 3)
        try select.bind(after.seq, at: 4)
        try select.bind(Int64(rowsLeft), at: 5)
        defer { select.reset() }
        guard try select.step() else { return nil }
        return Position(kind: select.int64(0), ts: select.int64(1), seq: select.int64(2))
    }

    /// Records (in the caller's transaction) how far the rename got.
    package func save(on connection: Connection) throws {
        let upsert = try connection.prepare(
            static: "INSERT OR REPLACE INTO pending_renames (k, name, kind, ts, seq) VALUES (?1, ?2, ?3, ?4, ?5)")
        try upsert.bind(key, at: 1)
        try upsert.bind(name, at: 2)
        try upsert.bind(after.kind, at: 3)
        try upsert.bind(after.ts, at: 4)
        try upsert.bind(after.seq, at: 5)
        try upsert.run()
    }

    /// Drops the pending rename of `key`, if any (its records are all renamed).
    package static func remove(key: Int64, on connection: Connection) throws {
        let delete = try connection.prepare(static: "DELETE FROM pending_renames WHERE k = ?1")
        try delete.bind(key, at: 1)
        try delete.run()
    }

    /// Renames the records listed under `key` after `after`, in index order, at most `limit` of them (nil: all)
    /// and stopping between steps once `stop()` says so: each record's `user` and line, and on an edge
    /// (`partitionsTotal`) its `kept_partition`, that of the user it had. Returns whether none remain.
    package mutating func advance(
        limit: Int?, partitionsTotal: Int?, stop: () -> Bool = { false }, on connection: Connection
    ) throws -> Bool {
        let select = try connection.prepare(
            static: """
                SELECT b.kind, b.ts, b.seq, r.user, r.line FROM (
                    SELECT * FROM (SELECT kind, ts, seq FROM by_user WHERE k = ?1 AND (kind, ts, seq) > (?2, ?3, ?4)
                        ORDER BY kind, ts, seq LIMIT ?5)
                    UNION ALL
                    SELECT * FROM (SELECT kind, ts, seq FROM by_user_recent
                        WHERE k = ?1 AND (kind, ts, seq) > (?2, ?3, ?4) ORDER BY kind, ts, seq LIMIT ?5)
                ) b LEFT JOIN records r ON r.seq = b.seq ORDER BY b.kind, b.ts, b.seq LIMIT ?5
                """)
        let update = try connection.prepare(
            static:
                "UPDATE records SET user = ?2, line = ?3, kept_partition = coalesce(kept_partition, ?4) WHERE seq = ?1")
        var left = limit ?? Int.max
        while left > 0 {
            let step = min(left, 256)
            try select.bind(key, at: 1)
            try select.bind(after.kind, at: 2)
            try select.bind(after.ts, at: 3)
            try select.bind(after.seq, at: 4)
            try select.bind(Int64(step), at: 5)
            var rows: [(seq: Int64, user: String, line: [UInt8])] = []
            var count = 0
            while try select.step() {
                count += 1
                after = Position(kind: select.int64(0), ts: select.int64(1), seq: select.int64(2))
                guard let user = select.text(3), !ExactString.equals(user, name) else { continue }
                rows.append((after.seq, user, select.bytes(4)))
            }
            select.reset()
            for row in rows {
                guard let line = UserMemberRewrite.renaming(row.line, to: name) else {
                    throw SQLiteError(
                        code: 1, message: "the line of record seq \(row.seq) has no top-level user to rename", sql: nil)
                }
                try update.bind(row.seq, at: 1)
                try update.bind(name, at: 2)
                try update.bindText(line, at: 3)
                try update.bind(partitionsTotal.map { Int64(Partition.of(user: row.user, total: $0)) }, at: 4)
                try update.run()
            }
            if count < step { return true }
            left -= count
            if stop() { break }
        }
        return false
    }
}
