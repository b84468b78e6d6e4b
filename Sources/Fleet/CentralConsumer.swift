import Dispatch
import Journal
import NATS
import OfferTrackDomain
import Posix
import Synchronization
import WireFormat

/// A central daemon's consumer (SPEC section 10): a durable pull consumer per partition, each fetched batch
/// validated and committed to the journal through `commit` (the daemon's writer, so the join runs as for any
/// batch), then acknowledged to the stream — never before the commit that holds it.
///
/// A record already journaled is a duplicate and changes nothing; the same id with other content is counted and
/// logged and never replaces what is journaled. A commit that fails is not acknowledged: the stream delivers
/// the batch again.
public final class CentralConsumer: Sendable {
    /// How far consuming has come.
    public struct Progress: Sendable, Equatable {
        /// Records committed (accepted) from the stream since start.
        public var accepted: Int
        /// Records the journal already held (redeliveries, forwarding again).
        public var duplicates: Int
        /// Ids the journal holds with other content: counted, logged, never replaced.
        public var conflicts: Int
        /// Lines that are not valid records (acknowledged and dropped: resending cannot fix them).
        public var invalid: Int
        /// Messages still in the stream for these partitions, as of the last fetch.
        public var lagRecords: UInt64
        /// How long ago the stream stored the newest message consumed, while messages are pending (seconds).
        public var lagSeconds: Double
    }

    private let client: JetStreamClient
    private let stream: StreamConfiguration
    private let partitions: [Int]
    private let commit: @Sendable ([Submission]) throws -> [AppendOutcome]
    private let recordLag: @Sendable (ConsumeLag) -> Void
    private let log: @Sendable (String) -> Void
    private let state = Mutex(
        Progress(accepted: 0, duplicates: 0, conflicts: 0, invalid: 0, lagRecords: 0, lagSeconds: 0))
    private let stopped = Mutex(false)
    private let finished = Mutex(false)
    private let queue = DispatchQueue(label: "offertrack.consumer")
    private let batch: Int

    /// Consumes `partitions` of `stream` (created when absent) with a durable consumer `central-<partition>` on
    /// each partition's subject; the consumers are bound on the consumer's thread, again after a failure, so a
    /// cluster that is down delays consuming and nothing else.
    public init(
        servers: [String], stream: StreamConfiguration, partitions: [Int], batch: Int = 500,
        commit: @escaping @Sendable ([Submission]) throws -> [AppendOutcome],
        recordLag: @escaping @Sendable (ConsumeLag) -> Void = { _ in },
        log: @escaping @Sendable (String) -> Void
    ) throws {
        client = try JetStreamClient(servers: servers, name: "offertrack-central")
        self.stream = stream
        self.partitions = partitions
        self.commit = commit
        self.recordLag = recordLag
        self.log = log
        self.batch = batch
    }

    public func start() {
        queue.async { [self] in run() }
    }

    /// Stops after the current batch; waits up to `timeoutSeconds`.
    public func stop(timeoutSeconds: Double = 5) {
        stopped.withLock { $0 = true }
        let deadline = Clock.monotonicMilliseconds() + Int64(timeoutSeconds * 1000)
        while !finished.withLock({ $0 }) && Clock.monotonicMilliseconds() < deadline { Sleep.milliseconds(5) }
    }

    public var progress: Progress { state.withLock { $0 } }

    // MARK: - The consumer's thread

    /// The stream and one bound consumer per partition, or nil while the cluster does not answer.
    private func bind() -> [PullSubscription]? {
        do {
            try client.addStreamIfAbsent(stream)
            return try partitions.map { partition in
                try client.pullSubscription(
                    stream: stream.name, durable: "central-\(partition)", filterSubject: Partition.subject(partition))
            }
        } catch {
            log("cannot bind the consumers of \(stream.name) yet: \(error)")
            return nil
        }
    }

    private func run() {
        defer { finished.withLock { $0 = true } }
        var backoff = 0
        var pending: [UInt64] = Array(repeating: 0, count: partitions.count)
        var bound: [PullSubscription]?
        var waitingPartition = 0
        var lastRecorded: (lag: ConsumeLag, at: Int64)?
        while !stopped.withLock({ $0 }) {
            // The lag, into the journal for `offertrack status`: when it changes, at most once a second.
            let now = Clock.monotonicMilliseconds()
            let current = state.withLock { $0 }
            if lastRecorded.map({ $0.lag.records != current.lagRecords && now - $0.at >= 1_000 }) ?? true {
                let lag = ConsumeLag(
                    records: current.lagRecords, seconds: current.lagSeconds, recordedAt: Clock.wallMilliseconds())
                recordLag(lag)
                lastRecorded = (lag, now)
            }
            if backoff > 0 { Sleep.milliseconds(backoff) }
            guard let subscriptions = bound ?? bind() else {
                backoff = min(5_000, max(250, backoff * 2))
                continue
            }
            bound = subscriptions
            // One round: what every partition has (up to `batch` each), committed in one transaction. Only a
            // round that has found nothing yet waits, on one partition at a time in turn.
            var gathered: [NATSMessage] = []
            var newestStoredAt: Int64?
            var fetchFailed = false
            for (index, subscription) in subscriptions.enumerated() {
                guard !stopped.withLock({ $0 }) else { break }
                let wait: Int64 = gathered.isEmpty && index == waitingPartition ? Self.idleWaitMilliseconds : 1
                let messages: [NATSMessage]
                do {
                    messages = try subscription.fetch(batch: batch, timeoutMilliseconds: wait)
                } catch {
                    fetchFailed = true
                    continue
                }
                let newest = messages.last?.metadata
                pending[index] = newest?.pending ?? 0
                if let storedAt = newest?.storedAtNanoseconds {
                    newestStoredAt = max(newestStoredAt ?? storedAt, storedAt)
                }
                gathered += messages
            }
            waitingPartition = (waitingPartition + 1) % subscriptions.count
            if fetchFailed { backoff = min(5_000, max(100, backoff * 2)) }
            guard !gathered.isEmpty else {
                state.withLock {
                    $0.lagRecords = 0
                    $0.lagSeconds = 0
                }
                continue
            }
            guard consume(gathered) else {
                backoff = min(5_000, max(100, backoff * 2))
                continue
            }
            if !fetchFailed { backoff = 0 }
            let total = pending.reduce(0, +)
            let seconds =
                total == 0
                ? 0 : newestStoredAt.map { Double(max(0, Clock.wallMilliseconds() - $0 / 1_000_000)) / 1000 } ?? 0
            state.withLock {
                $0.lagRecords = total
                $0.lagSeconds = seconds
            }
        }
    }

    /// How long a round that has found nothing waits on one partition for a message, in milliseconds.
    static let idleWaitMilliseconds: Int64 = 50

    /// Commits one fetched batch and acknowledges it; false when the commit failed (nothing acknowledged).
    private func consume(_ messages: [NATSMessage]) -> Bool {
        var submissions: [Submission] = []
        var carriers: [NATSMessage] = []
        var invalid = 0
        for message in messages {
            let line = message.data
            guard case .valid(let record) = RecordValidator.validate(line) else {
                invalid += 1
                log("stream message \(message.header("Nats-Msg-Id") ?? "?") is not a valid record; dropped")
                try? message.acknowledge()
                continue
            }
            submissions.append(Submission(record: record, line: line))
            carriers.append(message)
        }
        let outcomes: [AppendOutcome]
        do {
            outcomes = submissions.isEmpty ? [] : try commit(submissions)
        } catch {
            log(
                "committing \(submissions.count) records from the stream failed (they will be delivered again): \(error)"
            )
            return false
        }
        var counts = (accepted: 0, duplicates: 0, conflicts: 0)
        for (index, outcome) in outcomes.enumerated() {
            switch outcome {
            case .accepted: counts.accepted += 1
            case .duplicate: counts.duplicates += 1
            case .conflict:
                counts.conflicts += 1
                log("record \(submissions[index].record.id) from the stream conflicts with the journaled one; kept")
            }
        }
        for message in carriers { try? message.acknowledge() }
        state.withLock {
            $0.accepted += counts.accepted
            $0.duplicates += counts.duplicates
            $0.conflicts += counts.conflicts
            $0.invalid += invalid
        }
        return true
    }
}
