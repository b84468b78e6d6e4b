import OfferTrackDomain

/// The returning-user workload (`offertrack simulate --returning`): users come back over the simulated days, so
/// each user's records are spread over the whole run instead of arriving together.
///
/// Every user's visits are generated, then all records are put in time order (as a fleet of apps would send
/// them), so memory grows with the records (about 300 bytes each); `records` stops the output early.
/// Deterministic like `WorkloadSimulator`: identical arguments give identical lines.
public struct ReturningUserSimulator: Sequence, Sendable {
    public let users: Int
    public let seed: UInt64
    public let start: Int64
    public let days: Int
    /// At most this many records; nil: every user's.
    public let records: Int?

    public init(
        users: Int, seed: UInt64 = 1, start: Int64 = WorkloadSimulator.defaultStart, days: Int = 7,
        records: Int? = nil
    ) {
        self.users = Swift.max(0, users)
        self.seed = seed
        self.start = start
        self.days = Swift.max(1, days)
        self.records = records.map { Swift.max(0, $0) }
    }

    public func makeIterator() -> IndexingIterator<[SimulatedRecord]> { generate().makeIterator() }

    /// The lines alone, without their terminating `\n`.
    public var lines: [String] { generate().map(\.line) }

    private func generate() -> [SimulatedRecord] {
        let span = Int64(days) * Timestamp.millisecondsPerDay
        var counter: UInt64 = 0
        var all: [SimulatedRecord] = []
        all.reserveCapacity(users * 6)
        for index in 0..<users {
            all += UserJourney.generateReturning(
                index: index, seed: seed, t0: start, span: span, counter: &counter)
        }
        all.sort { RecordOrder.precedes($0.record, $1.record) }
        if let records, all.count > records { all.removeLast(all.count - records) }
        return all
    }
}
