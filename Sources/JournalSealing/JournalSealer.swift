import AttributionJoin
import JournalStore
import OfferTrackDomain
import Posix
import SQLite

/// `offertrack seal` (SPEC section 12): seals every day older than the retention, in short transactions, while
/// the daemon ingests.
///
/// 1. The acceptance horizon moves first (one transaction), to 00:00Z of T + 1 + K for the last day T to seal: no
///    record can reach those days, or a window that reads them, from then on.
/// 2. In one read snapshot, the users with records on the days to seal are found and each user's presentations
///    on them counted per grouping, with eligibility under the rules' F (the report's presented and
///    presentedEligible of a sealed day).
/// 3. Day by day, one transaction each: the day's counts stored and S moved to the day. The day is sealed: reports
///    read its presentations from the counts, and its records not kept (`SealKeeping`) may go.
/// 4. The sealed days' rows (but reviews and erasures) leave `records` in `seq` order, in chunks of their own
///    transactions, so that each page of the table and of its `id` index is written once: each record stays as its
///    per-user index entry alone, its id's hash saying where (`SealedFacts`), which is what sealing keeps of any
///    record; a loaded presentation's derived row goes with it.
/// 5. Users in chunks of their own transactions: each user's sealed records that no rule can read again leave the
///    per-user index too (their ids kept as keyed hashes, their number added to the user's count); those
///    `SealKeeping` names stay, which every reader of a user's history reads already. The user's derived rows are
///    recomputed from what stays. Any subset of a user's records that holds the kept ones gives the same
///    attribution, so a run killed between two chunks leaves every output as it was; the next run finishes (it
///    finds the users whose rows are gone but entries not yet trimmed from their entries on the days it did not
///    clean).
///
/// A chunk also ends once it has run `chunkMilliseconds` (after a row, or a user). After its commit the seal
/// checkpoints its own pages (passive: no lock the daemon waits for) and waits `pauseFactor` times as long as the
/// chunk took (at least `pauseMilliseconds`), so that the daemon's writer, which polls for the lock every
/// millisecond, commits between two chunks, and the seal's pages do not fill the daemon's WAL up to the limit at
/// which its commits wait for a blocking checkpoint (answers still wait longer than a chunk now and then:
/// bench/RESULTS.md) (back to back, chunks of 200 users held the lock 97 % of a 1,000,000-record seal's time, 0.17 s
/// each at the median, and answers under 10,000 records/s waited seconds).
public final class JournalSealer {
    /// What a run did.
    public struct Outcome: Sendable, Equatable {
        /// The days sealed by this run (UTC day numbers), nil when none.
        public var sealedDays: ClosedRange<Int64>?
        /// How many records it removed (those of days an interrupted run had sealed included).
        public var recordsRemoved: Int
        /// The state after the run; nil when the journal was never sealed.
        public var state: SealState?
    }

    /// Why a run cannot start.
    public enum Refusal: Error, Sendable, Equatable {
        /// The rules' W or F differ from those of the journal's seals.
        case windowsDiffer(RulesError)
        /// The daemon is recomputing the derived tables for new rules: sealing waits for it to finish.
        case recomputeInProgress
    }

    let connection: Connection
    private let usersPerChunk: Int
    /// The most records one transaction removes.
    private let recordsPerChunk: Int
    /// The most rows one transaction of step 4 takes out of `records`.
    let rowsPerChunk: Int
    /// How long a chunk may run before it commits (checked after each user), and the shortest pause after each
    /// chunk's commit (it lasts `pauseFactor` times as long as the chunk did), in which a writer waiting for the
    /// lock takes it.
    let chunkMicroseconds: UInt64
    private let pauseMilliseconds: Int
    /// How many times as long as a chunk the pause after it lasts. Beside a seal the daemon's commits wait for the
    /// lock and for their WAL's `fdatasync` behind the writeback of the pages the seal changed (bench/RESULTS.md,
    /// "Sealed days"): paced three times slower, a 1,000,000-record day's seal beside 2,000 records/s left answers
    /// p50 / p99 0.8 / 104 ms against 9.2 / 167 ms with pauses as long as each chunk (paired runs), and took 266 s
    /// against 137.
    static let pauseFactor = 3
    private let hooks: SealHooks
    /// Write transactions committed so far (the tests' hooks count them).
    private var steps = 0
    /// The first day of a record this run had to leave in `records` (`RecordRow.held`): days from it on are not
    /// cleaned yet, and the next run cleans them again.
    var heldDay: Int64?

    /// Opens the journal at `path` for sealing (it must exist and have the current schema).
    public init(
        path: String, usersPerChunk: Int = 200, recordsPerChunk: Int = 5_000, rowsPerChunk: Int = 5_000,
        chunkMilliseconds: Int = 50,
        pauseMilliseconds: Int = 5, busyTimeoutMilliseconds: Int32 = 5000, hooks: SealHooks = SealHooks()
    ) throws {
        connection = try JournalOpening.open(
            path: path, mode: .readWrite, schema: .requireCurrent, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        try connection.execute("PRAGMA synchronous=FULL")
        // Removed records' bytes are zeroed, as an erasure's rename's are (SPEC 11).
        try connection.execute("PRAGMA secure_delete=ON")
        self.usersPerChunk = max(1, hooks.usersPerChunk ?? usersPerChunk)
        self.recordsPerChunk = max(1, recordsPerChunk)
        self.rowsPerChunk = max(1, hooks.rowsPerChunk ?? rowsPerChunk)
        chunkMicroseconds = UInt64(max(1, chunkMilliseconds)) * 1000
        self.pauseMilliseconds = max(0, pauseMilliseconds)
        self.hooks = hooks
    }

    /// Runs one step in its own write transaction.
    func step<T>(_ body: () throws -> T) throws -> T {
        let result = try connection.transaction(body)
        steps += 1
        hooks.afterStep(steps)
        return result
    }

    /// Seals every day before date(`asOf`) − R not sealed yet (and finishes removing the records of days an
    /// interrupted run sealed).
    public func seal(retention: Retention, asOf: Int64) throws -> Outcome {
        heldDay = nil
        let before = try SealState.read(on: connection)
        if let before,
            let refusal = before.check(
                AttributionSettings(windowMs: retention.windowMs, freshnessMs: retention.freshnessMs))
        {
            throw Refusal.windowsDiffer(refusal)
        }
        guard try connection.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'recompute_conversions'") == 0
        else { throw Refusal.recomputeInProgress }
        let target = retention.lastSealableDay(asOf: asOf)
        let firstDay: Int64?
        if let before {
            firstDay = before.lastSealedDay + 1
        } else {
            firstDay = try connection.scalarInt("SELECT min(ts) FROM records").map(Timestamp.dayNumber)
        }
        var sealedDays: ClosedRange<Int64>?
        if let firstDay, firstDay <= target {
            try moveHorizon(to: retention.horizon(lastSealedDay: target), retention: retention, firstDay: firstDay)
            sealedDays = firstDay...target
        }
        // Users whose records may go: those of the days sealed now, and of days sealed before but not cleaned.
        let cleanFrom = before.map { $0.cleanedThroughDay + 1 } ?? firstDay ?? 0
        let cleanThrough = sealedDays?.upperBound ?? before?.lastSealedDay ?? Int64.min
        guard cleanFrom <= cleanThrough else {
            return Outcome(sealedDays: nil, recordsRemoved: 0, state: before)
        }
        let settings = AttributionSettings(windowMs: retention.windowMs, freshnessMs: retention.freshnessMs)
        // After a run that did not finish, users whose rows it removed may still hold entries no rule reads.
        let unfinished = before.flatMap { $0.cleanedThroughDay < $0.lastSealedDay ? $0 : nil }
        let plan = try usersAndCounts(
            through: cleanThrough, counting: sealedDays,
            recovering: unfinished.map { ($0.cleanedThroughDay + 1, $0.sealedBefore) },
            settings)
        let counts = plan.counts
        if let sealedDays {
            for day in sealedDays {
                try step {
                    try (counts[day] ?? DayRollup()).write(on: connection, presentationTable: .sealed)
                    try JournalMeta(connection).set(SealState.lastSealedDayKey, to: day)
                }
            }
        }
        guard let state = try SealState.read(on: connection) else {
            return Outcome(sealedDays: sealedDays, recordsRemoved: 0, state: nil)
        }
        // Step 4: the rows, in `seq` order (each page of `records` and of its `id` index written once).
        let derived = try DerivedTables.settings(on: connection) != nil
        if let lastSeq = plan.lastSeq {
            var cursor = plan.firstSeq - 1
            try paced {
                cursor = try removeRows(after: cursor, through: lastSeq, state: state, derived: derived)
                return cursor >= lastSeq
            }
        }
        // Step 5: the users, trimmed to what sealing keeps.
        var removed = 0
        var next = 0
        let users = plan.users
        if !users.isEmpty {
            try paced {
                let (through, count) = try step { try removeUnkept(of: users, from: next, state: state) }
                removed += count
                next = through
                return next >= users.count
            }
        }
        let cleaned = heldDay.map { min(state.lastSealedDay, $0 - 1) } ?? state.lastSealedDay
        try step { try JournalMeta(connection).set(SealState.cleanedKey, to: cleaned) }
        return Outcome(sealedDays: sealedDays, recordsRemoved: removed, state: try SealState.read(on: connection))
    }

    /// Runs `chunk` (which commits its own steps) until it returns true, pausing after each `pauseFactor` times as
    /// long as it took (at least `pauseMilliseconds`), so that the seal holds the write lock at most a quarter of the
    /// time, and writes its pages at most a quarter as fast as it could, whatever the disk and the other traffic.
    /// After each the seal copies its own pages into the database file, without the write lock: left to the daemon,
    /// a WAL grown by the seal would hold the daemon's commits back for a blocking checkpoint (its WAL limit). A
    /// checkpoint that cannot finish now (a reader, a full disk) is the daemon's to finish.
    private func paced(_ chunk: () throws -> Bool) throws {
        var lastChunkMilliseconds: Int?
        while true {
            if let lastChunkMilliseconds {
                Sleep.milliseconds(max(pauseMilliseconds, Self.pauseFactor * lastChunkMilliseconds))
            }
            let started = Clock.monotonicMilliseconds()
            let done = try chunk()
            lastChunkMilliseconds = Int(Clock.monotonicMilliseconds() - started)
            _ = try? connection.scalarText("PRAGMA wal_checkpoint(PASSIVE)")
            if done { return }
        }
    }

    /// Step 1: the horizon (never moved back), the windows sealed with and the ids' key, in one transaction; before
    /// the first seal, nothing is cleaned yet (the day before `firstDay`).
    private func moveHorizon(to horizon: Int64, retention: Retention, firstDay: Int64) throws {
        try step {
            let meta = JournalMeta(connection)
            try meta.setIfAbsent(SealState.cleanedKey, to: firstDay - 1)
            try meta.set(SealState.horizonKey, to: max(horizon, try meta.value(SealState.horizonKey) ?? .min))
            try meta.set(SealState.windowKey, to: retention.windowMs)
            try meta.set(SealState.freshnessKey, to: retention.freshnessMs)
            try meta.setIfAbsent(SealState.hashKey, to: SealedIDs.newKey())
        }
    }

    /// What step 2 found: the users whose records may go, the range of `seq` of the rows that go, and the sealed
    /// days' presentation counts.
    private struct Plan {
        var users: [Int64] = []
        var firstSeq: Int64 = 0
        var lastSeq: Int64?
        var counts: [Int64: DayRollup] = [:]
    }

    /// Step 2, in one snapshot: the keys of the users with `records` rows (other than reviews and erasures) on the
    /// days up to `last` (those of days sealed now, of days an interrupted run did not clean, and the journal's last
    /// row if it was held back) and the range of those rows' `seq`; after a run that did not finish, also the users
    /// with index entries on the days it did not clean (`recovering`: the first of them, and the end of the days it
    /// sealed), whose rows it may have removed; and their presentations on the days of `counting` per day and
    /// grouping.
    private func usersAndCounts(
        through last: Int64, counting: ClosedRange<Int64>?, recovering: (firstDay: Int64, sealedBefore: Int64)?,
        _ settings: AttributionSettings
    ) throws -> Plan {
        try connection.readTransaction {
            let day = Timestamp.millisecondsPerDay
            let scan = try connection.prepare(
                """
                SELECT u.k, min(r.seq), max(r.seq) FROM records r JOIN users u ON u.user = r.user
                WHERE r.ts < ?1 AND r.type < 3 GROUP BY u.k
                """)
            try scan.bind((last + 1) * day, at: 1)
            var plan = Plan()
            var keys = Set<Int64>()
            while try scan.step() {
                keys.insert(scan.int64(0))
                plan.firstSeq = plan.lastSeq == nil ? scan.int64(1) : min(plan.firstSeq, scan.int64(1))
                plan.lastSeq = max(plan.lastSeq ?? .min, scan.int64(2))
            }
            scan.reset()
            if let recovering {
                let entries = try connection.prepare(
                    """
                    SELECT k FROM by_user WHERE ts >= ?1 AND ts < ?2 AND kind < 6
                    UNION SELECT k FROM by_user_recent WHERE ts >= ?1 AND ts < ?2 AND kind < 6
                    """)
                try entries.bind(recovering.firstDay * day, at: 1)
                try entries.bind(recovering.sealedBefore, at: 2)
                while try entries.step() { keys.insert(entries.int64(0)) }
                entries.reset()
            }
            plan.users = keys.sorted()
            guard let counting else { return plan }
            for key in plan.users {
                let entries = try UserIndexEntries.entries(of: key, on: connection)
                let attribution = Attribution.attribute(userRecords: entries.map(\.record), settings: settings)
                for fact in attribution.presentations where counting.contains(Timestamp.dayNumber(fact.ts)) {
                    plan.counts[Timestamp.dayNumber(fact.ts), default: DayRollup()].count(fact, sign: 1)
                }
            }
            return plan
        }
    }

    /// Step 5 for one chunk (in the caller's transaction): users from `keys[first]` on, at most `usersPerChunk` of
    /// them and `recordsPerChunk` records changed, so that a user with a long history (a hot id) is spread over
    /// several transactions, and no user after the first once it has run `chunkMicroseconds`. Each sealed record
    /// leaves `records`: one that sealing keeps stays as its per-user index entry alone (`SealedFacts`), any other
    /// leaves the index too. Returns the index of the first user not finished and how many records left the index.
    private func removeUnkept(of keys: [Int64], from first: Int, state: SealState) throws -> (Int, Int) {
        let derived = try DerivedTables.settings(on: connection)
        let meta = JournalMeta(connection)
        let hashKey = try meta.value(SealState.hashKey).flatMap(SealedIDs.bytes(hex:)) ?? []
        // On an edge, what the stream has not acknowledged stays until it has (SPEC 12, Fleet).
        let forwardedThrough = try meta.value(JournalFeed.forwardedThroughKey)
        var rollup = DayRollup()
        var changed = 0
        var removed = 0
        var index = first
        let deadline = Clock.monotonicMicroseconds() + chunkMicroseconds
        while index < keys.count, index - first < usersPerChunk, changed < recordsPerChunk,
            index == first || Clock.monotonicMicroseconds() < deadline
        {
            let key = keys[index]
            guard let user = try UserKeys.name(of: key, on: connection) else {
                index += 1
                continue
            }
            let entries = try UserIndexEntries.entries(of: key, user: user, on: connection)
            let kept = SealKeeping.kept(entries.map(\.record), sealedBefore: state.sealedBefore)
            var work: [(entry: UserIndexEntries.Entry, step: SealStep)] = []
            for (position, entry) in entries.enumerated()
            where entry.record.ts < state.sealedBefore && !SealKeeping.isNeverSealed(entry.record) {
                switch try row(of: entry.seq, forwardedThrough: forwardedThrough) {
                case .held:
                    heldDay = min(heldDay ?? .max, Timestamp.dayNumber(entry.record.ts))
                    continue
                case .present: work.append((entry, kept.contains(position) ? .keep : .remove))
                case .absent where !kept.contains(position): work.append((entry, .remove))
                case .absent where entry.level != .sealed || !entry.sealedBody: work.append((entry, .rewrite))
                case .absent: continue
                }
            }
            // Any part of it may be done now: what stays still holds every kept record.
            let now = work.prefix(recordsPerChunk - changed)
            // A body rewritten changes no record: the derived rows stay as they are.
            let recompute = derived != nil && now.contains { $0.step != .rewrite }
            if !now.isEmpty {
                if recompute {
                    try DerivedTables.dropRows(user: user, key: key, formerKey: key, rollup: &rollup, on: connection)
                }
                for (entry, step) in now {
                    switch step {
                    case .keep:
                        try dropRecordRow(entry.seq)
                        try SealedFacts.keep(entry, key: key, hashKey: hashKey, on: connection)
                        try SealedFacts.moveToSealedLevel(entry, key: key, on: connection)
                    case .rewrite:
                        try SealedFacts.moveToSealedLevel(entry, key: key, on: connection)
                    case .remove:
                        try dropRecordRow(entry.seq)
                        try SealedFacts.dropIndexEntry(entry, key: key, on: connection)
                        try SealedFacts.forget(id: entry.record.id, hashKey: hashKey, on: connection)
                    }
                }
                let left = now.count { $0.step == .remove }
                if left > 0 { try SealedFacts.countRemoved(Int64(left), key: key, on: connection) }
                if recompute, let derived {
                    try DerivedTables.insertRows(
                        user: user, key: key, settings: derived, rollup: &rollup, on: connection)
                }
                changed += now.count
                removed += left
            }
            if now.count == work.count { index += 1 }
        }
        try rollup.write(on: connection)
        return (index, removed)
    }

    /// What step 5 does with one sealed record.
    private enum SealStep {
        /// Its row goes; its entry stays, with its id's hash saying where, moved to the sealed level with its sealed
        /// body.
        case keep
        /// Kept, its row already gone (step 4): its entry moves to the sealed level with its sealed body.
        case rewrite
        /// Its row and entry go; its id's hash stays.
        case remove
    }

    /// Where a record's `records` row is.
    private enum RecordRow {
        case absent
        case present
        /// A row that must stay for now: the journal's last (SQLite would give its `seq` to the next record were
        /// it deleted: it goes once a later record is journaled), or on an edge one the stream has not yet
        /// acknowledged.
        case held
    }

    private func row(of seq: Int64, forwardedThrough: Int64?) throws -> RecordRow {
        let select = try connection.prepare(
            static: "SELECT seq = (SELECT max(seq) FROM records) FROM records WHERE seq = ?1")
        try select.bind(seq, at: 1)
        defer { select.reset() }
        guard try select.step() else { return .absent }
        if select.int64(0) == 1 || forwardedThrough.map({ seq > $0 }) == true { return .held }
        return .present
    }

    func dropRecordRow(_ seq: Int64) throws {
        let drop = try connection.prepare(static: "DELETE FROM records WHERE seq = ?1")
        try drop.bind(seq, at: 1)
        try drop.run()
    }
}
