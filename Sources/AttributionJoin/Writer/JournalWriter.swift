import JournalStore
import OfferTrackDomain
import Posix
import SQLite

/// The journal's single writer: appends batches of records in one `BEGIN IMMEDIATE` transaction each.
///
/// After a failed commit the connection is closed and reopened before the next batch, so a failed fsync is
/// never followed by acting as if the data were on disk: SQLite's WAL recovery decides what survived.
public final class JournalWriter {
    /// How a writer runs, as its owner decides it in production.
    public struct Options: Sendable {
        public var durability: Durability
        /// Whether opening migrates the journal (the daemon, `rebuild`) or refuses another schema version.
        public var schema: SchemaPolicy
        public var busyTimeoutMilliseconds: Int32
        /// Whether attribution's derived tables are maintained with each batch: off for the stores that publish
        /// files, `rebuild`'s own and an edge's (`--journal-only`).
        public var maintainsDerivedTables: Bool
        /// Whether commits checkpoint the WAL themselves (SQLite's default); off when the owner calls checkpoints
        /// from another connection (the daemon's checkpoint thread, `WALCheckpointer`).
        public var checkpointsOnCommit: Bool
        /// An edge's P (SPEC 10): a record renamed by an erasure keeps its user's partition among P, to be
        /// forwarded on it (SPEC 11); nil for a journal that does not forward.
        public var partitionsTotal: Int?
        /// Where a migration's progress lines go (the executable's `Logger`, which names the program).
        public var migrationLog: Logger

        public init(
            durability: Durability, schema: SchemaPolicy = .requireCurrent, busyTimeoutMilliseconds: Int32 = 2000,
            maintainsDerivedTables: Bool = true, checkpointsOnCommit: Bool = true, partitionsTotal: Int? = nil,
            migrationLog: Logger = .discard
        ) {
            self.durability = durability
            self.schema = schema
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
            self.maintainsDerivedTables = maintainsDerivedTables
            self.checkpointsOnCommit = checkpointsOnCommit
            self.partitionsTotal = partitionsTotal
            self.migrationLog = migrationLog
        }
    }

    /// Knobs that tests and measurements turn; the defaults are production's.
    public struct Tuning: Sendable {
        /// A user with more records than this is refreshed by lookups (`BoundedRefresh`) instead of from their
        /// whole history; tests set 0 to take that path for every returning user.
        public var historyLimit: Int
        /// Whether freed space is zeroed (`PRAGMA secure_delete`), as forgetting a person needs; off only in the
        /// test that shows the old bytes would otherwise stay.
        public var secureDelete: Bool
        /// How schema 8's migration runs when this writer migrates.
        public var migration: UserKeysMigrationTuning
        /// How much of an erasure's rename its batch does (the rest: `continuePendingRenames`, schema 13).
        public var renames: RenameTuning

        public init(
            historyLimit: Int = JournalWriter.defaultHistoryLimit, secureDelete: Bool = true,
            migration: UserKeysMigrationTuning = .init(), renames: RenameTuning = .init()
        ) {
            self.historyLimit = historyLimit
            self.secureDelete = secureDelete
            self.migration = migration
            self.renames = renames
        }
    }

    public let path: String
    public let options: Options
    public let tuning: Tuning
    private var connection: Connection?
    /// The default `Tuning.historyLimit`: above it, lookups cost less than reading the history. A user's first
    /// record after a restart reads up to this many of their entries plus one before the join knows which
    /// (300,000 returning records of 50,000 users, daemon CPU a record after 10,000,000 records of theirs, one run
    /// each: 29.6 µs with 16, 31.9 with 32, 36.1 with 64; after 1,000,000, 20 a user: 24.5, 25.3 and 26.1 µs).
    public static let defaultHistoryLimit = 16
    /// The WAL's size in frames after the last commit, when `checkpointsOnCommit` is off.
    private let walFrames = WALFrameCount()
    /// Hints kept between batches, all forgotten together on a failure (`WriterCaches`).
    var caches = WriterCaches()
    /// A recompute for new windows in progress (`beginRecompute`), advanced between batches.
    var recompute: DerivedTablesRecompute?
    /// How long the last committed batch's `COMMIT` took alone (its WAL frames written and synced), in µs.
    public private(set) var lastCommitStatementMicroseconds: UInt64 = 0
    /// How many groups of returning users' records each path of the join took since this writer was made.
    public var joinCounts: JoinCounts { caches.joinCounts }
    /// How many returning users' summaries this writer took from the last writer when it opened, and in how many
    /// milliseconds; nil when it found none it could trust (`SavedSummaries`).
    public private(set) var savedSummariesTaken: (count: Int, milliseconds: Int64)?
    /// Each user's accepted records in the last committed batch (for the daemon's watch on hot users).
    public private(set) var lastBatchUsers: [(user: String, records: Int)] = []

    public var durability: Durability { options.durability }
    public var schema: SchemaPolicy { options.schema }
    public var maintainsDerivedTables: Bool { options.maintainsDerivedTables }
    public var checkpointsOnCommit: Bool { options.checkpointsOnCommit }
    public var partitionsTotal: Int? { options.partitionsTotal }
    public var historyLimit: Int { tuning.historyLimit }
    public var renameTuning: RenameTuning { tuning.renames }

    /// Opens the journal at `path` (with `schema: .migrate`, creating it if needed and migrating it; otherwise
    /// refusing one of another schema version), and brings attribution's derived tables up to date under
    /// `settings` (a full recomputation when they were computed under other windows).
    public init(
        path: String, options: Options, settings: AttributionSettings = .defaults, tuning: Tuning = .init()
    ) throws {
        self.path = path
        self.options = options
        self.tuning = tuning
        let connection = try Self.open(path: path, options: options, tuning: tuning, walFrames: walFrames)
        self.connection = connection
        if options.schema == .migrate { try finishPendingRenames() }
        if options.maintainsDerivedTables { try adopt(settings) }
        try takeSavedSummaries()
    }

    /// A writer with production's options but `durability` and `schema` (tests and tools).
    public convenience init(
        path: String, durability: Durability, schema: SchemaPolicy = .requireCurrent,
        settings: AttributionSettings = .defaults, tuning: Tuning = .init()
    ) throws {
        try self.init(
            path: path, options: Options(durability: durability, schema: schema), settings: settings, tuning: tuning)
    }

    /// Makes the derived tables follow `settings`, recomputing them all if they were computed under others.
    /// Returns whether a recomputation was needed.
    @discardableResult
    public func adopt(_ settings: AttributionSettings) throws -> Bool {
        let connection = try connectionInUse()
        recompute = nil
        return try connection.transaction {
            guard try DerivedTables.settings(on: connection) != settings else {
                try Schema.dropRecomputeCopies(on: connection)
                return false
            }
            try DerivedTables.rebuild(settings: settings, on: connection)
            return true
        }
    }

    static func open(path: String, options: Options, tuning: Tuning, walFrames: WALFrameCount) throws -> Connection {
        let connection = try JournalOpening.open(
            path: path, mode: options.schema == .migrate ? .readWriteCreate : .readWrite, schema: options.schema,
            busyTimeoutMilliseconds: options.busyTimeoutMilliseconds, keepsSavedSummaries: true)
        let mode = try connection.scalarText("PRAGMA journal_mode=WAL")
        guard mode == "wal" else {
            throw SQLiteError(code: 1, message: "journal_mode=WAL answered \(mode ?? "nothing")", sql: nil)
        }
        try connection.execute("PRAGMA synchronous=\(options.durability.pragmaValue)")
        if !options.checkpointsOnCommit {
            try connection.execute("PRAGMA wal_autocheckpoint=0")
            connection.countWALFrames(into: walFrames)
        }
        try connection.execute("PRAGMA cache_size=-32768")
        // Freed space is zeroed, so that an erasure's rename leaves the old bytes in no page (SPEC 11).
        try connection.execute("PRAGMA secure_delete=\(tuning.secureDelete ? "ON" : "OFF")")
        if options.schema == .migrate {
            try Schema.migrate(connection, tuning: tuning.migration, log: options.migrationLog)
        }
        return connection
    }

    /// Appends `batch` in one transaction. Throws (and journals nothing of the batch) when it cannot commit.
    ///
    /// A forgotten person's records are renamed before they are journaled, and the batch's erasures are applied
    /// first (SPEC section 11, `ErasureRenames`): the outcomes are for the records as journaled.
    public func append(_ submitted: [Submission], receivedAt: Int64) throws -> [AppendOutcome] {
        let connection = try connectionInUse()
        do {
            var lastSeq: Int64 = 0
            var copyChanges = DerivedTablesRecompute.Step()
            var nextSlice: Int64?
            var batch = submitted
            var probes: [UInt64] = []
            var restartedRecompute: DerivedTablesRecompute?
            // The batch grouped by user, when the join planned it (each user's accepted records are counted from it).
            var planGroups: [BatchJoinPlan.Group]?
            var longUsers: Set<ExactString> = []
            var workDone: UInt64 = 0
            let outcomes = try connection.transaction {
                lastSeq = try RecordQueries.lastSeq(on: connection)
                // Before anything of the batch: notices records another connection appended.
                caches.knownUsers.synchronize(journalLastSeq: lastSeq)
                caches.summaries.synchronize(journalLastSeq: lastSeq)
                try caches.userKeys.synchronize(on: connection)
                try caches.erasedUsers.load(on: connection)
                // Sealed days (SPEC 12): read in the batch's transaction, so a seal committed before it counts.
                let sealed = try SealedIDs(on: connection)
                let renames = try ErasureRenames(
                    submitted, erased: caches.erasedUsers, partitionsTotal: partitionsTotal,
                    rowsInBatch: renameTuning.rowsInBatch, sealed: sealed, on: connection)
                batch = renames.batch
                if !renames.renamedUsers.isEmpty || !renames.merged.isEmpty { caches.forgetNames() }
                probes = renames.probes
                try DayRollup.sealedCounts(following: renames.sealedEligibilityChanges).write(
                    on: connection, presentationTable: .sealed)
                // Renamed users had records before: the join must not take them for new ones.
                for name in renames.renamedUsers + renames.merged.map(\.user) {
                    _ = caches.knownUsers.noteAppend(of: name)
                }
                // A rename moves a user in the name order a recompute for new windows walks: it starts over.
                if let running = recompute, !renames.renamedUsers.isEmpty || !renames.merged.isEmpty {
                    restartedRecompute = try DerivedTablesRecompute.start(settings: running.settings, on: connection)
                }
                // The join's pure part runs meanwhile on another thread.
                let settings =
                    maintainsDerivedTables
                    ? try DerivedTables.settings(on: connection, memo: &caches.sharedUsersMemo) : nil
                let plan = settings.map {
                    BatchJoinPlan.start(
                        batch: batch, settings: $0, skipping: caches.longHistoryUsers,
                        mayBeJournaled: caches.knownUsers.completeFilter)
                }
                var outcomes: [AppendOutcome] = []
                outcomes.reserveCapacity(batch.count)
                let firstSeq = lastSeq + 1
                var lastKey: (user: String, key: Int64)?
                // Users given a key from here on are new: their entries go straight to the main level.
                let freshFrom = try UserKeys.nextKey(on: connection)
                // Each accepted record's user key, by batch index (the join reads histories by key).
                var keys = [Int64](repeating: 0, count: batch.count)
                for (index, submission) in batch.enumerated() {
                    let outcome = try RecordAppend.append(
                        submission, seq: lastSeq + 1, receivedAt: receivedAt, lastKey: &lastKey, freshFrom: freshFrom,
                        userKeys: caches.userKeys, knownUsers: caches.knownUsers, sealed: sealed, on: connection)
                    if case .accepted(let seq) = outcome {
                        lastSeq = seq
                        keys[index] = lastKey?.key ?? 0
                    }
                    outcomes.append(outcome)
                }
                try renames.keepPartitions(of: outcomes, on: connection)
                try UserPartitions.note(batch, on: connection)
                if let plan, let settings, lastSeq >= firstSeq || !renames.merged.isEmpty {
                    let plan = plan.wait()
                    planGroups = plan.groups
                    longUsers = try refreshDerivedTables(
                        plan, batch: batch, outcomes: outcomes, keys: keys, firstSeq: firstSeq,
                        merged: renames.merged, settings: settings,
                        copy: restartedRecompute == nil ? recompute : nil, copyChanges: &copyChanges, on: connection)
                }
                nextSlice = try UserKeys.moveSlice(
                    from: caches.sliceCursor, lastSeq: lastSeq, batchRecords: lastSeq - firstSeq + 1, on: connection)
                workDone = Clock.monotonicMicroseconds()
                return outcomes
            }
            lastCommitStatementMicroseconds = Clock.monotonicMicroseconds() &- workDone
            caches.sliceCursor = nextSlice
            caches.erasedUsers.committed(probes)
            lastBatchUsers =
                planGroups.map { BatchUserCounts.counts(groups: $0, outcomes: outcomes) }
                ?? BatchUserCounts.counts(batch, outcomes: outcomes)
            caches.knownUsers.committed(lastSeq: lastSeq)
            caches.summaries.committed(lastSeq: lastSeq)
            caches.longHistoryUsers = longUsers
            if let restartedRecompute { recompute = restartedRecompute } else { recompute?.apply(copyChanges) }
            return outcomes
        } catch {
            caches.forgetAll()
            distrustConnection(after: error)
            throw error
        }
    }

    /// After a failed transaction: on an I/O error or anything unexpected (not a busy or full journal), drops the
    /// connection, so that the next one reopens it instead of trusting its view of the file.
    func distrustConnection(after error: any Error) {
        if let error = error as? SQLiteError, !error.isBusy && !error.isFull {
            connection = nil
            caches.forgetAll()
        }
    }

    /// The writer's connection for another module's own statements (the published ledger's stores): what they
    /// change is not what the summaries saw, so the writer stops trusting them.
    package func currentConnection() throws -> Connection {
        caches.summaries.forget()
        return try connectionInUse()
    }

    /// The writer's connection, opened again when `close()` or a failure it distrusts dropped it.
    func connectionInUse() throws -> Connection {
        if let connection { return connection }
        let reopened = try Self.open(path: path, options: options, tuning: tuning, walFrames: walFrames)
        connection = reopened
        return reopened
    }
}

extension JournalWriter {
    /// The WAL's length in frames after the last commit, when `checkpointsOnCommit` is off (0 otherwise): the
    /// owner checkpoints it from another connection (`WALCheckpointer`) as it grows.
    public var framesInWAL: Int { Int(walFrames.frames) }

    /// Marks the derived tables as never computed, for a writer that will not maintain them (`--journal-only`):
    /// reports then recompute attribution from the journal, and the next writer that maintains them, or
    /// `offertrack rebuild`, recomputes them first.
    public func invalidateDerivedTables() throws {
        let connection = try connectionInUse()
        try connection.transaction {
            let forget = try connection.prepare("DELETE FROM meta WHERE key IN (?1, ?2, ?3)")
            try forget.bind(DerivedTables.windowKey, at: 1)
            try forget.bind(DerivedTables.freshnessKey, at: 2)
            try forget.bind(DerivedTables.holdingKey, at: 3)
            try forget.run()
        }
    }

    /// Closes the connection (SQLite checkpoints and removes the WAL when it is the last one), saving the summaries
    /// of returning users for the next writer (`SavedSummaries`) when it trusts them. A later append reopens it.
    public func close() {
        if let connection, maintainsDerivedTables, let trusted = caches.summaries.trusted, !trusted.summaries.isEmpty {
            // A hint: a journal that cannot take it is left as it is, and the next writer reads histories.
            try? SavedSummaries.save(trusted.summaries, lastSeq: trusted.lastSeq, on: connection)
        }
        connection = nil
        caches.forgetAll()
    }

    /// Takes the summaries the last writer saved (`SavedSummaries`): held when this writer maintains the derived
    /// tables and the journal still ends where they were saved; forgotten in every case.
    func takeSavedSummaries() throws {
        let connection = try connectionInUse()
        let started = Clock.monotonicMilliseconds()
        guard let saved = try SavedSummaries.take(on: connection), maintainsDerivedTables else { return }
        caches.summaries.adopt(saved.summaries, lastSeq: saved.lastSeq)
        savedSummariesTaken = (saved.summaries.count, Clock.monotonicMilliseconds() - started)
    }

    /// The highest `seq` journaled so far (0 when empty).
    public func lastSeq() throws -> Int64 {
        try RecordQueries.lastSeq(on: connectionInUse())
    }

    /// Teaches the join which users the journal holds, reading at most `limit` users; returns whether
    /// more remain. Until it has all of them (or when another connection appended records), every user of a
    /// batch costs an index probe; after, only users seen before do. An empty journal needs no learning.
    public func learnJournaledUsers(limit: Int = KnownUsers.defaultChunk) throws -> Bool {
        guard maintainsDerivedTables else { return false }
        return try caches.knownUsers.learn(limit: limit, on: connectionInUse())
    }

    /// Whether `learnJournaledUsers` has work left: the join maintained, and not every journaled user known.
    public var needsToLearnUsers: Bool { maintainsDerivedTables && !caches.knownUsers.isComplete }

    /// How many users the last round of `learnJournaledUsers` read, and the memory of the filter they are in.
    public var learnedUsers: (count: Int, filterBytes: Int) {
        (caches.knownUsers.learnedUsers, caches.knownUsers.filterBytes)
    }
}
