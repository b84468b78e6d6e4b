import OfferTrackDomain

/// The deterministic NDJSON workload of `offertrack simulate` (SPEC section 6), as a lazy sequence.
///
/// Identical arguments give identical lines on any machine. User number `i` starts its journey at a seeded
/// moment in the `i`-th slice of `[start, start + days)`, so lines come roughly in time order; about 3% of
/// records are held back and emitted after the next user's (late arrivals) and about 2% of lines are repeated
/// exactly (client retries); one user in 40 is followed by a signed-out visit under `anonymous` (SPEC rule 4.0),
/// and one in 150 by an operator's erasure of them (SPEC 3.5), both without changing any other line. A
/// few conversions land more than the default window after their presentation,
/// and so after the simulated days. Nothing is held in memory beyond a couple of users' records.
public struct WorkloadSimulator: Sequence, Sendable {
    /// How many users to simulate.
    public let users: Int
    /// The seed; different seeds give different workloads.
    public let seed: UInt64
    /// The first simulated instant (UTC epoch milliseconds).
    public let start: Int64
    /// How many days the users' first records spread over.
    public let days: Int

    /// 2026-11-01T00:00:00Z.
    public static let defaultStart: Int64 = 1_793_491_200_000

    public init(users: Int, seed: UInt64 = 1, start: Int64 = defaultStart, days: Int = 1) {
        self.users = Swift.max(0, users)
        self.seed = seed
        self.start = start
        self.days = Swift.max(1, days)
    }

    /// A ULID-like record id as the simulator makes them: 10 Crockford base32 digits of `ts`, then 8 of `counter`.
    public static func recordID(ts: Int64, counter: UInt64) -> String { UserJourney.recordId(ts: ts, counter: counter) }

    /// The lines alone, without their terminating `\n`.
    public var lines: LazyMapSequence<WorkloadSimulator, String> { lazy.map(\.line) }

    public func makeIterator() -> Iterator { Iterator(self) }

    /// Generates the records one user at a time.
    public struct Iterator: IteratorProtocol {
        private let simulator: WorkloadSimulator
        private var rng: SimulationRandom
        private var nextUser = 0
        private var counter: UInt64 = 0
        private var ready: [SimulatedRecord] = []
        private var readyIndex = 0
        private var late: [SimulatedRecord] = []

        init(_ simulator: WorkloadSimulator) {
            self.simulator = simulator
            rng = SimulationRandom(seed: SimulationRandom.mix(simulator.seed ^ 0x5EED))
        }

        public mutating func next() -> SimulatedRecord? {
            while readyIndex >= ready.count {
                guard nextUser < simulator.users || !late.isEmpty else { return nil }
                ready = nextBatch()
                readyIndex = 0
            }
            defer { readyIndex += 1 }
            return ready[readyIndex]
        }

        /// The next user's records, with duplicates added and some held back, then what was held back before.
        private mutating func nextBatch() -> [SimulatedRecord] {
            let heldBack = late
            late = []
            guard nextUser < simulator.users else { return heldBack }
            let span = Int64(simulator.days) * Timestamp.millisecondsPerDay
            let slot = Swift.max(1, span / Int64(simulator.users))
            let t0 = simulator.start + Int64(nextUser) * span / Int64(simulator.users) + rng.int(in: 0...(slot - 1))
            let records = UserJourney.generate(index: nextUser, seed: simulator.seed, t0: t0, counter: &counter)
            nextUser += 1
            var batch: [SimulatedRecord] = []
            batch.reserveCapacity(records.count + heldBack.count + 1)
            for record in records {
                // Operators' reviews draw nothing here either: every other line is as it was before reviews.
                if record.record.type == .review {
                    batch.append(record)
                    continue
                }
                if rng.chance(3) {
                    late.append(record)
                    continue
                }
                batch.append(record)
                if rng.chance(2) {
                    var repeated = record
                    repeated.isDuplicate = true
                    batch.append(repeated)
                }
            }
            // One user in 40 is followed by a signed-out visit (rule 4.0), drawing nothing from `rng`.
            if (nextUser - 1) % 40 == 13 {
                batch += UserJourney.generateSignedOut(index: nextUser - 1, seed: simulator.seed, t0: t0)
            }
            // One user in 150 asks to be forgotten six weeks on (SPEC 3.5), sent by operators: it changes no amount.
            if (nextUser - 1) % 150 == 31, let user = records.first?.record.user {
                batch.append(
                    UserJourney.erasure(of: user, index: nextUser - 1, at: t0 + 42 * Timestamp.millisecondsPerDay))
            }
            return batch + heldBack
        }
    }
}
