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
        /// Records whose user's partition is not one of this journal's (acknowledged, never journaled: SPEC 10).
        public var wrongPartition: Int
        /// Messages still in the stream for these partitions, as of the last fetch.
        public var lagRecords: UInt64
        /// How long ago the stream stored the newest message consumed, while messages are pending (seconds).
        public var lagSeconds: Double
    }

    private let client: JetStreamClient
    private let stream: FleetStream
    private let partitions: [Int]
    private let commit: @Sendable ([Submission]) throws -> [AppendOutcome]
    private let record: @Sendable (ConsumeLag, StreamReport) -> Void
    private let log: @Sendable (String) -> Void
    /// Whether the stream and the consumers work, for `STATUS=`, the metrics and `offertrack status`.
    public let health: StreamHealth
    private let state = Mutex(
        Progress(
            accepted: 0, duplicates: 0, conflicts: 0, invalid: 0, wrongPartition: 0, lagRecords: 0, lagSeconds: 0))
    /// When a refused record was last logged, and how many were refused since (at most a line every 10 s).
    private let refusalLog = Mutex((at: Int64(-10_000), unlogged: 0))
    private let stopped = Mutex(false)
    private let finished = Mutex(false)
    private let queue = DispatchQueue(label: "offertrack.consumer")
    private let batch: Int

    /// Consumes `partitions` of `stream` (created when absent) with a durable consumer `central-<partition>` on
    /// each partition's subject; the consumers are bound on the consumer's thread, again after a failure or when
    /// the server lost one, so a cluster that is down delays consuming and nothing else. `record` stores the lag
    /// and the stream's report in the journal. Throws `FleetStream.Mismatch` when the cluster answers now with a
    /// stream that records another P.
    public init(
        servers: [String], stream: FleetStream, partitions: [Int], batch: Int = 500,
        commit: @escaping @Sendable ([Submission]) throws -> [AppendOutcome],
        record: @escaping @Sendable (ConsumeLag, StreamReport) -> Void = { _, _ in },
        log: @escaping @Sendable (String) -> Void
    ) throws {
        client = try JetStreamClient(servers: servers, name: "offertrack-central")
        try stream.checkAgreement(on: client)
        self.stream = stream
        self.partitions = partitions
        self.commit = commit
        self.record = record
        self.log = log
        self.batch = batch
        health = StreamHealth(what: "consuming partitions of the stream \(stream.name)", log: log)
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

    /// The stream and one bound consumer per partition, or nil while they cannot be had (reported to `health`).
    private func bind() -> [PullSubscription]? {
        do {
            try stream.ensure(on: client)
        } catch {
            health.failed("\(error)", immediate: error.isPersistent)
            return nil
        }
        do {
            return try partitions.map { partition in
                try client.pullSubscription(
                    stream: stream.name, durable: Self.durable(partition), filterSubject: Partition.subject(partition))
            }
        } catch {
            let refused = ((error as? NATSError)?.jetStreamCode ?? 0) != 0
            health.failed("cannot bind the consumers of \(stream.name): \(error)", immediate: refused)
            return nil
        }
    }

    static func durable(_ partition: Int) -> String { "central-\(partition)" }

    /// How often, while rounds find nothing, the consumers are checked to still exist on the server (one that
    /// was deleted or lost with its stream answers nothing, as an empty partition would).
    static let consumerCheckMilliseconds: Int64 = 2_000

    /// Whether every consumer is still on the server (true when the server cannot tell now).
    private func consumersExist() -> Bool {
        guard client.isConnected else { return true }  // not asked while reconnecting: each ask would wait 5 s
        for partition in partitions {
            guard (try? client.consumerExists(stream: stream.name, durable: Self.durable(partition))) != false else {
                log("the consumer \(Self.durable(partition)) is gone from the stream \(stream.name); binding again")
                return false
            }
        }
        return true
    }

    private func run() {
        defer { finished.withLock { $0 = true } }
        var backoff = 0
        var pending: [UInt64] = Array(repeating: 0, count: partitions.count)
        var bound: [PullSubscription]?
        var waitingPartition = 0
        var lastRecorded: (lag: ConsumeLag, report: StreamReport, at: Int64)?
        var lastCheck = Clock.monotonicMilliseconds()
        while !stopped.withLock({ $0 }) {
            // The lag and the report, into the journal for `offertrack status`: when they change, at most once a
            // second (a new problem at once).
            let now = Clock.monotonicMilliseconds()
            let current = state.withLock { $0 }
            let report = self.report(current)
            if lastRecorded.map({
                $0.report.problem != report.problem
                    || (($0.lag.records != current.lagRecords || $0.report != report) && now - $0.at >= 1_000)
            }) ?? true {
                let lag = ConsumeLag(
                    records: current.lagRecords, seconds: current.lagSeconds, recordedAt: Clock.wallMilliseconds())
                record(lag, report)
                lastRecorded = (lag, report, now)
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
            var fetchFailure: NATSError?
            for (index, subscription) in subscriptions.enumerated() {
                guard !stopped.withLock({ $0 }) else { break }
                let wait: Int64 = gathered.isEmpty && index == waitingPartition ? Self.idleWaitMilliseconds : 1
                let messages: [NATSMessage]
                do {
                    messages = try subscription.fetch(batch: batch, timeoutMilliseconds: wait)
                } catch {
                    fetchFailure = error
                    health.failed("fetching partition \(partitions[index]) of \(stream.name) failed: \(error)")
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
            if fetchFailure != nil {
                // Bound again after the backoff: the consumer or its stream may be gone.
                backoff = min(5_000, max(100, backoff * 2))
                bound = nil
            } else {
                health.succeeded()
            }
            guard !gathered.isEmpty else {
                state.withLock {
                    $0.lagRecords = 0
                    $0.lagSeconds = 0
                }
                if bound != nil, now - lastCheck >= Self.consumerCheckMilliseconds {
                    lastCheck = now
                    if !consumersExist() { bound = nil }
                }
                continue
            }
            lastCheck = now
            guard consume(gathered) else {
                backoff = min(5_000, max(100, backoff * 2))
                continue
            }
            if fetchFailure == nil { backoff = 0 }
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

    private func report(_ progress: Progress) -> StreamReport {
        StreamReport(
            problem: health.state.problem, invalid: progress.invalid, conflicts: progress.conflicts,
            wrongPartition: progress.wrongPartition)
    }

    /// How long a round that has found nothing waits on one partition for a message, in milliseconds.
    static let idleWaitMilliseconds: Int64 = 50

    /// Commits one fetched batch and acknowledges it; false when the commit failed (nothing acknowledged).
    private func consume(_ messages: [NATSMessage]) -> Bool {
        var submissions: [Submission] = []
        var carriers: [NATSMessage] = []
        var invalid = 0
        var wrongPartition = 0
        for message in messages {
            let line = message.data
            guard case .valid(let record) = RecordValidator.validate(line) else {
                invalid += 1
                logRefusal("stream message \(message.header("Nats-Msg-Id") ?? "?") is not a valid record; dropped")
                try? message.acknowledge()
                continue
            }
            let partition = Partition.of(user: record.user, total: stream.partitionsTotal)
            guard partitions.contains(partition) else {
                wrongPartition += 1
                logRefusal(
                    "record \(record.id) on \(message.subject) belongs to partition \(partition) of "
                        + "\(stream.partitionsTotal), not to this journal's \(partitions.map(String.init).joined(separator: ",")); "
                        + "refused, not journaled (an edge with another --partitions-total, or a publisher other than an edge)"
                )
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
                logRefusal(
                    "record \(submissions[index].record.id) from the stream conflicts with the journaled one; kept")
            }
        }
        for message in carriers { try? message.acknowledge() }
        state.withLock {
            $0.accepted += counts.accepted
            $0.duplicates += counts.duplicates
            $0.conflicts += counts.conflicts
            $0.invalid += invalid
            $0.wrongPartition += wrongPartition
        }
        return true
    }

    /// Logs a refused message: the first, then at most one line every 10 s with how many were not logged.
    private func logRefusal(_ line: String) {
        let now = Clock.monotonicMilliseconds()
        let unlogged: Int? = refusalLog.withLock { last in
            guard now - last.at >= 10_000 else {
                last.unlogged += 1
                return nil
            }
            defer { last = (now, 0) }
            return last.unlogged
        }
        guard let unlogged else { return }
        log(line + (unlogged > 0 ? " (\(unlogged) more refused since the last line)" : ""))
    }
}
