import Posix
import SQLite

/// Schema 8: per-user access on integer keys. Each user is mapped once to an integer key (`users`, `k` its rowid),
/// and the per-user index is `by_user(k, ts, seq)` on those keys instead of `records(user, ts, id)` on text: an
/// entry is about 20 bytes instead of 50 to 90, so a batch of returning users' records dirties fewer index pages
/// (each of which is copied into the WAL at commit). Derived conversions name their user by key too. `records`
/// keeps its `user` column: the row is appended once and read by id, and rewriting every row is what the
/// migration avoids.
///
/// The migration runs in ONE transaction: a crash (kill -9, power loss) at any point before its commit leaves the
/// journal at schema 7 exactly as it was (SQLite ignores WAL frames of an uncommitted transaction), and after it
/// at schema 8. A copy-and-rename would need twice the journal's disk space and a second file to clean up after a
/// crash; the transaction needs only the WAL for the pages it writes (the new index and key tables, about 30
/// bytes a record) and rebuilds nothing of `records` itself. Keys are given in user order, so the new index is
/// written in its own order, from the old index, and the old index is dropped last.
enum UserKeysMigration {
    /// The tables schema 8 adds.
    static let tables = """
        CREATE TABLE users (k INTEGER PRIMARY KEY, user TEXT NOT NULL UNIQUE);
        CREATE TABLE by_user (
            k INTEGER NOT NULL,
            ts INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            PRIMARY KEY (k, ts, seq)
        ) WITHOUT ROWID;
        """

    /// Derived conversions keyed by user key instead of user name (otherwise as schema 7 left them).
    static let conversions = """
        CREATE TABLE derived_conversions_8 (
            ts INTEGER NOT NULL,
            id TEXT NOT NULL,
            k INTEGER NOT NULL,
            reason TEXT,
            offer_id TEXT,
            presented_at INTEGER,
            affiliate_token TEXT,
            campaign_token TEXT,
            message_identifier TEXT,
            item_id TEXT,
            lapse_id TEXT,
            lapse_ts INTEGER,
            review_id TEXT,
            review_ts INTEGER,
            review_decision INTEGER,
            review_reason TEXT,
            PRIMARY KEY (ts, id)
        ) WITHOUT ROWID;
        INSERT INTO derived_conversions_8
            SELECT d.ts, d.id, u.k, d.reason, d.offer_id, d.presented_at, d.affiliate_token, d.campaign_token,
                d.message_identifier, d.item_id, d.lapse_id, d.lapse_ts, d.review_id, d.review_ts, d.review_decision,
                d.review_reason
            FROM derived_conversions d JOIN users u ON u.user = d.user;
        DROP TABLE derived_conversions;
        ALTER TABLE derived_conversions_8 RENAME TO derived_conversions;
        """

    /// Migrates a schema-7 journal to schema 8 in one transaction, with progress lines on `log` (at info) when it
    /// has records.
    static func run(on connection: Connection, tuning: UserKeysMigrationTuning, log: Logger) throws {
        var progress = Progress(tuning: tuning, log: log)
        let chunk = tuning.usersPerStep
        try connection.execute("PRAGMA cache_size=-262144")
        defer { try? connection.execute("PRAGMA cache_size=-32768") }
        try connection.transaction {
            progress.step()
            let records = try connection.scalarInt("SELECT coalesce(max(seq), 0) FROM records") ?? 0
            progress.total = records
            if records > 0 {
                progress.say("migrating the journal to schema 8 (per-user index on integer keys): \(records) records")
            }
            try connection.execute(tables)
            try connection.execute(
                "INSERT INTO users (k, user) SELECT NULL, user FROM records GROUP BY user ORDER BY user")
            let users = try connection.scalarInt("SELECT coalesce(max(k), 0) FROM users") ?? 0
            progress.step()
            let fill = try connection.prepare(
                """
                INSERT INTO by_user (k, ts, seq)
                    SELECT u.k, r.ts, r.seq FROM users u CROSS JOIN records r ON r.user = u.user
                    WHERE u.k > ?1 AND u.k <= ?2
                """)
            var done: Int64 = 0
            var first: Int64 = 0
            while first < users {
                try fill.bind(first, at: 1)
                try fill.bind(first + chunk, at: 2)
                try fill.run()
                done += Int64(connection.changes)
                first += chunk
                progress.report(done: done)
                progress.step()
            }
            try connection.execute(conversions)
            try Schema.dropRecomputeCopies(on: connection)
            progress.step()
            try connection.execute("DROP INDEX records_by_user")
            try connection.execute("PRAGMA user_version = 8")
            progress.step()
        }
        progress.step()
        if progress.total > 0 {
            progress.say("migrated the journal to schema 8 in \(progress.elapsedSeconds) s; checkpointing the WAL")
            _ = try? connection.scalarText("PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// Progress lines at info (at most one every few seconds) and, in debug builds, the test hook's step count.
    struct Progress {
        var total: Int64 = 0
        private let log: Logger
        private let started = Clock.monotonicMilliseconds()
        private var lastSaid = Clock.monotonicMilliseconds()
        #if OFFERTRACK_FAULT_HOOKS
            private let killAfterStep: Int?
            private var steps = 0
        #endif

        init(tuning: UserKeysMigrationTuning, log: Logger) {
            self.log = log
            #if OFFERTRACK_FAULT_HOOKS
                killAfterStep = tuning.killAfterStep
            #endif
        }

        var elapsedSeconds: String {
            let tenths = (Clock.monotonicMilliseconds() - started) / 100
            return "\(tenths / 10).\(tenths % 10)"
        }

        /// A step of the migration done (the test hook's point to SIGKILL the process, in debug builds).
        mutating func step() {
            #if OFFERTRACK_FAULT_HOOKS
                if steps == killAfterStep {
                    log.warning("migration test hook: SIGKILL after step \(steps)")
                    CurrentProcess.killImmediately()
                }
                steps += 1
            #endif
        }

        mutating func report(done: Int64) {
            let now = Clock.monotonicMilliseconds()
            guard now - lastSaid >= 5000 else { return }
            lastSaid = now
            let percent = total > 0 ? done * 100 / total : 100
            say("migrating: \(done) of \(total) records indexed (\(percent)%), \(elapsedSeconds) s")
        }

        func say(_ line: String) { log.info(line) }
    }
}

/// How schema 8's migration runs: built by the executable that migrates (the daemon, `offertrack rebuild`); the
/// defaults, or in debug builds what the `OFFERTRACK_TEST_MIGRATION_*` environment variables or a test say.
public struct UserKeysMigrationTuning: Sendable, Equatable {
    /// Users per step of the index build: by default steps of about a second on a large journal.
    public var usersPerStep: Int64

    /// The tuning given (by default 100,000 users a step).
    public init(usersPerStep: Int64 = 100_000) {
        self.usersPerStep = usersPerStep
    }

    #if OFFERTRACK_FAULT_HOOKS
        /// The environment variables the executables read the tuning from (debug builds only).
        public static let killAfterStepVariable = "OFFERTRACK_TEST_MIGRATION_KILL_AFTER_STEP"
        public static let usersPerStepVariable = "OFFERTRACK_TEST_MIGRATION_USERS_PER_STEP"

        /// Test hook: SIGKILL the process after this many steps of the migration (0 right after `BEGIN`).
        public var killAfterStep: Int?

        /// The tuning given, with the test hook.
        public init(killAfterStep: Int?, usersPerStep: Int64 = 100_000) {
            self.killAfterStep = killAfterStep
            self.usersPerStep = usersPerStep
        }

        /// The tuning from `variable` (the executable's environment), by the names above.
        public init(_ variable: (String) -> String?) {
            self.init(
                killAfterStep: variable(Self.killAfterStepVariable).flatMap { Int($0) },
                usersPerStep: variable(Self.usersPerStepVariable).flatMap { Int64($0) } ?? 100_000)
        }
    #endif
}
