import OfferTrackDomain
import Posix
import SQLite

/// Publishes an export day in short transactions, so that ingest never waits for a whole day's publication.
///
/// The publication is staged as a run: its CSV in parts of `partBytes`, then its lines as rows (`ExportLines`) and its
/// ledger changes in chunks of `entriesPerChunk`, each chunk in its own transaction, with a pause after each so that a
/// writer waiting for the lock (the daemon's, which tries every millisecond) gets it in between. `publish` then names
/// the run in `published_days` in one small transaction; until then nothing reads the run. A run that is never
/// published (its export crashed, or lost the day to another export) is deleted, in chunks too, after the next
/// publication.
final class ExportStaging {
    /// How long the exporter pauses after each chunk, in milliseconds.
    static let pauseMilliseconds = 2

    let run: Int64
    private let connection: Connection
    private let limits: ExportLimits
    private var chunks = 0
    private let hooks: ExportStagingHooks

    /// Starts a run for `day` that stores `lines` lines.
    init(
        day: String, startedAt: Int64, lines: Int, limits: ExportLimits, hooks: ExportStagingHooks,
        on connection: Connection
    ) throws {
        self.connection = connection
        self.limits = limits
        self.hooks = hooks
        run = try connection.transaction {
            let insert = try connection.prepare(
                "INSERT INTO export_runs (day, started_at, lines) VALUES (?1, ?2, ?3)")
            try insert.bind(day, at: 1)
            try insert.bind(startedAt, at: 2)
            try insert.bind(Int64(lines), at: 3)
            try insert.run()
            return connection.lastInsertRowID
        }
    }

    /// Stages `csv`, its `lines` and the ledger `changes` of the day `day`, chunk by chunk.
    func stage(csv: [UInt8], lines: [ExportPlan.Line], changes: [ExportPlan.LedgerChange], day: String) throws {
        let partBytes = hooks.partBytes ?? limits.partBytes
        var start = 0
        var part: Int64 = 0
        repeat {
            let end = min(csv.count, start + partBytes)
            try chunk { connection in
                let insert = try connection.prepare("INSERT INTO export_parts (run, part, bytes) VALUES (?1, ?2, ?3)")
                try insert.bind(run, at: 1)
                try insert.bind(part, at: 2)
                try insert.bindText(Array(csv[start..<end]), at: 3)
                try insert.run()
            }
            start = end
            part += 1
        } while start < csv.count
        let perChunk = hooks.entries ?? limits.entriesPerChunk
        for first in stride(from: 0, to: lines.count, by: perChunk) {
            try chunk { connection in
                try ExportLines.insert(
                    lines[first..<min(lines.count, first + perChunk)], first: first, run: run, on: connection)
            }
        }
        // The day's own rows need no entry when withdrawn: nothing was in force for them.
        let entries = changes.filter { $0.row != nil || $0.day != day }
        for first in stride(from: 0, to: entries.count, by: perChunk) {
            try chunk { connection in
                for change in entries[first..<min(entries.count, first + perChunk)] {
                    try insertEntry(change, on: connection)
                }
            }
        }
    }

    private func insertEntry(_ change: ExportPlan.LedgerChange, on connection: Connection) throws {
        let insert = try connection.prepare(
            """
            INSERT INTO ledger_entries (run, original_date, conversion_id, removed, converted_at, offer_id,
                presented_at, affiliate_token, campaign_token, message_identifier, item_id, amount_minor, currency)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
            """)
        try insert.bind(run, at: 1)
        try insert.bind(change.day, at: 2)
        try insert.bind(change.conversionId, at: 3)
        try insert.bind(change.row == nil ? 1 : 0, at: 4)
        if let row = change.row { try insert.bindColumns(of: row, from: 5) }
        try insert.run()
    }

    /// Names the run as `day`'s publication, unless `isCurrent` (run in the same transaction) says the plan is out
    /// of date. Returns whether it published.
    func publish(day: String, generatedAt: Int64, manifest: [UInt8], isCurrent: () throws -> Bool) throws -> Bool {
        try connection.transaction {
            guard try isCurrent() else { return false }
            let publish = try connection.prepare(
                "INSERT INTO published_days (day, generated_at, csv, manifest, run) VALUES (?1, ?2, ?3, ?4, ?5)")
            try publish.bind(day, at: 1)
            try publish.bind(generatedAt, at: 2)
            try publish.bindText([UInt8](), at: 3)
            try publish.bindText(manifest, at: 4)
            try publish.bind(run, at: 5)
            try publish.run()
            return true
        }
    }

    /// Deletes, in chunks, every run that can no longer be published: runs of a day already published (by another
    /// run) or earlier than the latest published day. Runs of a later day may belong to an export still going on.
    static func deleteAbandonedRuns(limits: ExportLimits, on connection: Connection) throws {
        let abandoned = try connection.allTexts(
            """
            SELECT run FROM export_runs
            WHERE day <= (SELECT max(day) FROM published_days)
                AND run NOT IN (SELECT run FROM published_days WHERE run IS NOT NULL)
            """
        ).compactMap { Int64($0) }
        let chunk = Int64(limits.entriesPerChunk)
        for run in abandoned {
            for table in ["export_parts", "export_lines", "ledger_entries"] {
                var deleted = chunk
                while deleted == chunk {
                    deleted = try connection.transaction {
                        // Part numbers, line numbers and ledger keys of one run: deleting by the first `chunk` keys
                        // in order.
                        let key =
                            switch table {
                            case "export_parts": "part"
                            case "export_lines": "line"
                            default: "original_date, conversion_id"
                            }
                        let delete = try connection.prepare(
                            """
                            DELETE FROM \(table) WHERE run = ?1 AND (\(key)) IN
                                (SELECT \(key) FROM \(table) WHERE run = ?1 ORDER BY \(key) LIMIT ?2)
                            """)
                        try delete.bind(run, at: 1)
                        try delete.bind(chunk, at: 2)
                        try delete.run()
                        return Int64(connection.changes)
                    }
                    Sleep.milliseconds(pauseMilliseconds)
                }
            }
            try connection.transaction {
                let delete = try connection.prepare("DELETE FROM export_runs WHERE run = ?1")
                try delete.bind(run, at: 1)
                try delete.run()
            }
        }
    }

    /// One chunk in its own transaction (which fails when the run was deleted meanwhile), then the pause.
    private func chunk(_ body: (Connection) throws -> Void) throws {
        try connection.transaction {
            let alive = try connection.prepare("SELECT 1 FROM export_runs WHERE run = ?1")
            try alive.bind(run, at: 1)
            let exists = try alive.step()
            alive.reset()
            guard exists else { throw AbandonedRun(run: run) }
            try body(connection)
        }
        chunks += 1
        hooks.afterChunk(chunks)
        // Copies the chunk into the database from this process before the next one (SQLite's own autocheckpoint
        // waits for 1,000 frames), keeping the WAL short while the day is staged.
        _ = try? connection.scalarText("PRAGMA wal_checkpoint(PASSIVE)")
        Sleep.milliseconds(Self.pauseMilliseconds)
    }

    /// The run was deleted while it was staged: another export published the day.
    struct AbandonedRun: Error {
        let run: Int64
    }

}

/// How much an export reads or writes in one transaction.
package struct ExportLimits: Sendable {
    /// Bytes of CSV a part holds.
    package var partBytes: Int
    /// Ledger changes or lines (about 150 bytes each) one transaction stages, or abandoned rows one deletes.
    package var entriesPerChunk: Int
    /// Conversions one read transaction of the plan reads.
    package var conversionsPerRead: Int

    package init(partBytes: Int = 1 << 20, entriesPerChunk: Int = 4096, conversionsPerRead: Int = 20_000) {
        self.partBytes = max(1, partBytes)
        self.entriesPerChunk = max(1, entriesPerChunk)
        self.conversionsPerRead = max(1, conversionsPerRead)
    }
}

#if OFFERTRACK_FAULT_HOOKS
    /// Test hooks of an export's staging (debug builds only), built by the executable that runs the export (from the
    /// `OFFERTRACK_TEST_EXPORT_*` environment variables) or by a test; none by default.
    public struct ExportStagingHooks: Sendable {
        /// The environment variables the executables read the hooks from.
        public static let killAfterChunkVariable = "OFFERTRACK_TEST_EXPORT_KILL_AFTER_CHUNK"
        public static let pauseAfterChunkVariable = "OFFERTRACK_TEST_EXPORT_PAUSE_AFTER_CHUNK"
        public static let pauseFileVariable = "OFFERTRACK_TEST_EXPORT_PAUSE_FILE"
        public static let partBytesVariable = "OFFERTRACK_TEST_EXPORT_PART_BYTES"
        public static let entriesVariable = "OFFERTRACK_TEST_EXPORT_ENTRIES"

        /// SIGKILL the process after this many chunks.
        public var killAfterChunk: Int?
        /// After this many chunks, create `pauseFile` and wait until it is removed.
        public var pauseAfterChunk: Int?
        public var pauseFile: String?
        /// Parts of this many bytes, instead of the limits'.
        public var partBytes: Int?
        /// Chunks of this many lines or ledger changes, instead of the limits'.
        public var entries: Int?

        /// The hooks given (none by default); parts and chunks of at least 1.
        public init(
            killAfterChunk: Int? = nil, pauseAfterChunk: Int? = nil, pauseFile: String? = nil, partBytes: Int? = nil,
            entries: Int? = nil
        ) {
            self.killAfterChunk = killAfterChunk
            self.pauseAfterChunk = pauseAfterChunk
            self.pauseFile = pauseFile
            self.partBytes = partBytes.map { max(1, $0) }
            self.entries = entries.map { max(1, $0) }
        }

        /// The hooks from `variable` (the executable's environment), by the names above.
        public init(_ variable: (String) -> String?) {
            self.init(
                killAfterChunk: variable(Self.killAfterChunkVariable).flatMap { Int($0) },
                pauseAfterChunk: variable(Self.pauseAfterChunkVariable).flatMap { Int($0) },
                pauseFile: variable(Self.pauseFileVariable),
                partBytes: variable(Self.partBytesVariable).flatMap { Int($0) },
                entries: variable(Self.entriesVariable).flatMap { Int($0) })
        }

        func afterChunk(_ count: Int) {
            if count == killAfterChunk {
                FileDescriptor.printError("offertrack: export test hook: SIGKILL after chunk \(count)")
                CurrentProcess.killImmediately()
            }
            if count == pauseAfterChunk, let pauseFile {
                try? FileSystem.writeAtomically([], to: pauseFile)
                while FileSystem.exists(pauseFile) { Sleep.milliseconds(10) }
            }
        }
    }
#else
    /// A release build has no test hooks: the staging runs by its `ExportLimits`.
    public struct ExportStagingHooks: Sendable {
        public init() {}
        var partBytes: Int? { nil }
        var entries: Int? { nil }
        func afterChunk(_ count: Int) {}
    }
#endif
