import AttributionJoin
import JournalStore
import OfferTrackDomain
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
/// 4. Users in chunks of their own transactions: each user's sealed records that no rule can read again are
///    removed (their ids kept as keyed hashes, their number added to the user's count), and the user's derived
///    rows recomputed from what stays. Any subset of a user's records that holds the kept ones gives the same
///    attribution, so a run killed between two chunks leaves every output as it was; the next run finishes.
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

    private let connection: Connection
    private let usersPerChunk: Int
    /// The most records one transaction removes.
    private let recordsPerChunk: Int
    private let hooks: SealHooks
    /// Write transactions committed so far (the tests' hooks count them).
    private var steps = 0

    /// Opens the journal at `path` for sealing (it must exist and have the current schema).
    public init(
        path: String, usersPerChunk: Int = 200, recordsPerChunk: Int = 5_000, busyTimeoutMilliseconds: Int32 = 5000,
        hooks: SealHooks = SealHooks()
    ) throws {
        connection = try JournalOpening.open(
            path: path, mode: .readWrite, schema: .requireCurrent, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        try connection.execute("PRAGMA synchronous=FULL")
        // Removed records' bytes are zeroed, as an erasure's rename's are (SPEC 11).
        try connection.execute("PRAGMA secure_delete=ON")
        self.usersPerChunk = max(1, hooks.usersPerChunk ?? usersPerChunk)
        self.recordsPerChunk = max(1, recordsPerChunk)
        self.hooks = hooks
    }

    /// Runs one step in its own write transaction.
    private func step<T>(_ body: () throws -> T) throws -> T {
        let result = try connection.transaction(body)
        steps += 1
        hooks.afterStep(steps)
        return result
    }

    /// Seals every day before date(`asOf`) − R not sealed yet (and finishes removing the records of days an
    /// interrupted run sealed).
    public func seal(retention: Retention, asOf: Int64) throws -> Outcome {
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
        let (users, counts) = try usersAndCounts(from: cleanFrom, through: cleanThrough, counting: sealedDays, settings)
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
        var removed = 0
        var next = 0
        while next < users.count {
            let (through, count) = try step { try removeUnkept(of: users, from: next, state: state) }
            removed += count
            next = through
        }
        try step { try JournalMeta(connection).set(SealState.cleanedKey, to: state.lastSealedDay) }
        return Outcome(sealedDays: sealedDays, recordsRemoved: removed, state: try SealState.read(on: connection))
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

    /// Step 2, in one snapshot: the keys of the users with records (other than reviews and erasures) on the days
    /// `[first, last]`, and their presentations on the days of `counting` per day and grouping.
    private func usersAndCounts(
        from first: Int64, through last: Int64, counting: ClosedRange<Int64>?, _ settings: AttributionSettings
    ) throws -> (users: [Int64], counts: [Int64: DayRollup]) {
        try connection.readTransaction {
            let day = Timestamp.millisecondsPerDay
            let scan = try connection.prepare(
                """
                SELECT DISTINCT u.k FROM records r JOIN users u ON u.user = r.user
                WHERE r.ts >= ?1 AND r.ts < ?2 AND r.type < 3
                """)
            try scan.bind(first * day, at: 1)
            try scan.bind((last + 1) * day, at: 2)
            var keys: [Int64] = []
            while try scan.step() { keys.append(scan.int64(0)) }
            scan.reset()
            keys.sort()
            var counts: [Int64: DayRollup] = [:]
            guard let counting else { return (keys, counts) }
            for key in keys {
                let entries = try UserIndexEntries.entries(of: key, on: connection)
                let attribution = Attribution.attribute(userRecords: entries.map(\.record), settings: settings)
                for fact in attribution.presentations where counting.contains(Timestamp.dayNumber(fact.ts)) {
                    counts[Timestamp.dayNumber(fact.ts), default: DayRollup()].count(fact, sign: 1)
                }
            }
            return (keys, counts)
        }
    }

    /// Step 4 for one chunk (in the caller's transaction): users from `keys[first]` on, at most `usersPerChunk` of
    /// them and `recordsPerChunk` removals, so that a user with a long history (a hot id) is spread over several
    /// transactions. Returns the index of the first user not finished and how many records went.
    private func removeUnkept(of keys: [Int64], from first: Int, state: SealState) throws -> (Int, Int) {
        let derived = try DerivedTables.settings(on: connection)
        let hashKey = try JournalMeta(connection).value(SealState.hashKey).flatMap(SealedIDs.bytes(hex:)) ?? []
        let name = try connection.prepare(static: "SELECT user FROM users WHERE k = ?1")
        var rollup = DayRollup()
        var removed = 0
        var index = first
        while index < keys.count, index - first < usersPerChunk, removed < recordsPerChunk {
            let key = keys[index]
            try name.bind(key, at: 1)
            let user = try name.step() ? name.text(0) : nil
            name.reset()
            guard let user else {
                index += 1
                continue
            }
            let entries = try UserIndexEntries.entries(of: key, user: user, on: connection)
            let kept = SealKeeping.kept(entries.map(\.record), sealedBefore: state.sealedBefore)
            let leaving = entries.indices.filter {
                entries[$0].record.ts < state.sealedBefore && !kept.contains($0)
                    && !SealKeeping.isNeverSealed(entries[$0].record)
            }
            // Any part of them may go now: what stays still holds every kept record.
            let now = leaving.prefix(recordsPerChunk - removed)
            if !now.isEmpty {
                if derived != nil {
                    try DerivedTables.dropRows(user: user, key: key, formerKey: key, rollup: &rollup, on: connection)
                }
                for position in now { try remove(entries[position], key: key, hashKey: hashKey) }
                try addRemoved(now.count, key: key)
                if let derived {
                    try DerivedTables.insertRows(
                        user: user, key: key, settings: derived, rollup: &rollup, on: connection)
                }
                removed += now.count
            }
            if now.count == leaving.count { index += 1 }
        }
        try rollup.write(on: connection)
        return (index, removed)
    }

    /// Takes one record out of the journal and its user's index, keeping a keyed hash of its id.
    private func remove(_ entry: UserIndexEntries.Entry, key: Int64, hashKey: [UInt8]) throws {
        let dropRecord = try connection.prepare(static: "DELETE FROM records WHERE seq = ?1")
        try dropRecord.bind(entry.seq, at: 1)
        try dropRecord.run()
        let dropEntry = try connection.prepare(
            static: entry.recent
                ? "DELETE FROM by_user_recent WHERE k = ?1 AND kind = ?2 AND ts = ?3 AND seq = ?4"
                : "DELETE FROM by_user WHERE k = ?1 AND kind = ?2 AND ts = ?3 AND seq = ?4")
        try dropEntry.bind(key, at: 1)
        try dropEntry.bind(entry.kind, at: 2)
        try dropEntry.bind(entry.record.ts, at: 3)
        try dropEntry.bind(entry.seq, at: 4)
        try dropEntry.run()
        let keepID = try connection.prepare(static: "INSERT OR IGNORE INTO sealed_ids (hash) VALUES (?1)")
        try keepID.bind(SealedIDs.hash(entry.record.id, key: hashKey), at: 1)
        try keepID.run()
    }

    /// Adds `count` to the user's number of removed records.
    private func addRemoved(_ count: Int, key: Int64) throws {
        let upsert = try connection.prepare(
            static: """
                INSERT INTO sealed_users (k, records) VALUES (?1, ?2)
                ON CONFLICT (k) DO UPDATE SET records = records + excluded.records
                """)
        try upsert.bind(key, at: 1)
        try upsert.bind(Int64(count), at: 2)
        try upsert.run()
    }
}
