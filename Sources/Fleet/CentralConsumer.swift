import Dispatch
import JournalStore
import NATS
import OfferTrackDomain
import Posix
import Synchronization
import WireFormat

/// A central daemon's consumer (SPEC section 10): a durable pull consumer per partition; each fetched message's
/// records (one or more lines, `StreamBatch.lines(of:)`) validated and committed to the journal through `commit`
/// (the daemon's writer, so the join runs as for any batch), then the message acknowledged to the stream — never
/// before the commit that holds the last of its records.
///
/// A commit holds at most `commitRecords` records: whole messages while they fit, a message with more records
/// than that split over several commits (and acknowledged after the last). A line that is not a valid record,
/// or a record of another partition, is counted and logged, never journaled, and the message's other records
/// are committed as usual. A record already journaled is a duplicate and changes nothing; the same id with other
/// content is counted and logged and never replaces what is journaled. A commit that fails is not acknowledged:
/// the stream delivers its messages again.
public final class CentralConsumer: Sendable {
    /// How far consuming has come.
    public struct Progress: Sendable, Equatable {
        /// Records committed (accepted) from the stream since start.
        public var accepted: Int
        /// Records the journal already held (redeliveries, forwarding again).
        public var duplicates: Int
        /// Ids the journal holds with other content: counted, logged, never replaced.
        public var conflicts: Int
        /// Lines that are not valid records (dropped, their messages acknowledged: resending cannot fix them).
        public var invalid: Int
        /// Records whose user's partition is not one of this journal's (acknowledged, never journaled: SPEC 10).
        public var wrongPartition: Int
        /// Records whose `ts` is before the journal's acceptance horizon (SPEC 12): acknowledged, never journaled.
        public var expired: Int = 0
        /// Records still in the stream for these partitions, as of the last fetch: the messages left after it,
        /// times the records per message it held.
        public var lagRecords: UInt64
        /// How long ago the stream stored the newest message consumed, while messages are pending (seconds).
        public var lagSeconds: Double
    }

    let client: JetStreamClient
    let stream: FleetStream
    let partitions: [Int]
    let commit: @Sendable ([Submission]) throws -> [AppendOutcome]
    let record: @Sendable (ConsumeLag, StreamReport) -> Void
    /// The daemon's rules' shared users now (rule 4.0), which the stream's lines are validated against.
    let sharedUsers: @Sendable () -> SharedUsers
    let log: Logger
    /// Whether the stream and the consumers work, for `STATUS=`, the metrics and `offertrack status`.
    public let health: StreamHealth
    let state = Mutex(
        Progress(
            accepted: 0, duplicates: 0, conflicts: 0, invalid: 0, wrongPartition: 0, lagRecords: 0, lagSeconds: 0))
    /// When a refused record was last logged, and how many were refused since (at most a line every 10 s).
    let refusalLog = Mutex((at: Int64(-10_000), unlogged: 0))
    let stopped = Mutex(false)
    let finished = Mutex(false)
    let queue = DispatchQueue(label: "offertrack.consumer")
    let batch: Int
    let commitRecords: Int
    /// What the partitions' fetchers have handed over and not yet committed, and their failures.
    let inbox = Mutex(Inbox())
    /// Signalled when a fetcher hands something over.
    let arrived = DispatchSemaphore(value: 0)
    /// Fetchers running now (of any generation).
    let running = Mutex(0)

    /// One connection per partition: a partition's fetches and acknowledgements run on its fetcher's thread
    /// and connection only (libnats 3.4 is used from one thread per subscription, as before the fetches were
    /// concurrent).
    let partitionClients: [JetStreamClient]

    /// A partition's fetched messages, their payloads, and its fetcher.
    struct FetchedBatch: Sendable {
        let messages: [NATSMessage]
        let payloads: [[UInt8]]
        let fetcher: Fetcher
    }

    /// What the committer and one partition's fetcher share: batches it may still fetch ahead, and the messages
    /// to acknowledge (committed, or refused) on its thread before its next fetch.
    final class Fetcher: Sendable {
        let slots = DispatchSemaphore(value: CentralConsumer.batchesAheadPerPartition)
        let acknowledgements = Mutex<[NATSMessage]>([])

        /// Hands `messages` to the fetcher to acknowledge and lets it fetch again.
        func finished(acknowledging messages: [NATSMessage]) {
            acknowledgements.withLock { $0 += messages }
            slots.signal()
        }

        /// Acknowledges what the committer handed back (on the fetcher's thread).
        func acknowledge() {
            let taken = acknowledgements.withLock { pending in
                defer { pending.removeAll() }
                return pending
            }
            for message in taken { try? message.acknowledge() }
        }
    }

    struct Inbox: Sendable {
        /// Bumped at each binding: fetchers of an older generation stop.
        var generation = 0
        var batches: [FetchedBatch] = []
        var failures: [String] = []
        /// Messages still in the stream for each partition (by index), and when the newest consumed was stored.
        var pending: [Int: (records: UInt64, storedAt: Int64?)] = [:]
    }

    /// Consumes `partitions` of `stream` (created when absent) with a durable consumer `central-<partition>` on
    /// each partition's subject; the consumers are bound on the consumer's thread, again after a failure or when
    /// the server lost one, so a cluster that is down delays consuming and nothing else. A fetch takes up to
    /// `batch` messages and about `fetchBytes` (fewer messages when they are large); a commit holds at most
    /// `commitRecords` records. `record` stores the lag and the stream's report in the journal. Throws
    /// `FleetStream.Mismatch` when the cluster answers now with a stream that records another P.
    public init(
        servers: [String], stream: FleetStream, partitions: [Int], batch: Int = 500,
        commitRecords: Int = defaultCommitRecords,
        commit: @escaping @Sendable ([Submission]) throws -> [AppendOutcome],
        record: @escaping @Sendable (ConsumeLag, StreamReport) -> Void = { _, _ in },
        sharedUsers: @escaping @Sendable () -> SharedUsers = { SharedUsers.defaults },
        log: Logger
    ) throws {
        client = try JetStreamClient(servers: servers, name: "offertrack-central")
        partitionClients = try partitions.map { partition in
            try JetStreamClient(servers: servers, name: "offertrack-central-\(partition)")
        }
        try stream.checkAgreement(on: client)
        self.stream = stream
        self.partitions = partitions
        self.commit = commit
        self.record = record
        self.sharedUsers = sharedUsers
        self.log = log
        self.batch = max(1, batch)
        self.commitRecords = max(1, commitRecords)
        health = StreamHealth(what: "consuming partitions of the stream \(stream.name)", log: log)
    }

    public func start() {
        queue.async { [self] in run() }
    }

    /// Stops after the current batch; waits up to `timeoutSeconds` (for the partitions' fetchers too).
    public func stop(timeoutSeconds: Double = 5) {
        stopped.withLock { $0 = true }
        arrived.signal()
        let deadline = Clock.monotonicMilliseconds() + Int64(timeoutSeconds * 1000)
        while !(finished.withLock { $0 } && running.withLock { $0 } == 0)
            && Clock.monotonicMilliseconds() < deadline
        {
            Sleep.milliseconds(5)
        }
    }

    public var progress: Progress { state.withLock { $0 } }

    /// Records a commit holds at most unless told otherwise (`--consume-batch`): a socket batch's limit.
    public static let defaultCommitRecords = 2_048

    // MARK: - The committer's thread

    /// The stream and one bound consumer per partition, or nil while they cannot be had (reported to `health`).
    func bind() -> [PullSubscription]? {
        do {
            try stream.ensure(on: client)
        } catch {
            health.failed("\(error)", immediate: error.isPersistent)
            return nil
        }
        do {
            let subscriptions = try zip(partitions, partitionClients).map { partition, partitionClient in
                try partitionClient.pullSubscription(
                    stream: stream.name, durable: Self.durable(partition), filterSubject: Partition.subject(partition))
            }
            health.succeeded()
            return subscriptions
        } catch {
            let refused = ((error as? NATSError)?.jetStreamCode ?? 0) != 0
            health.failed("cannot bind the consumers of \(stream.name): \(error)", immediate: refused)
            return nil
        }
    }

    static func durable(_ partition: Int) -> String { "central-\(partition)" }

    /// How often, while nothing arrives, the consumers are checked to still exist on the server (one that was
    /// deleted or lost with its stream answers nothing, as an empty partition would).
    static let consumerCheckMilliseconds: Int64 = 2_000

    /// Whether every consumer is still on the server (true when the server cannot tell now).
    func consumersExist() -> Bool {
        guard client.isConnected else { return true }  // not asked while reconnecting: each ask would wait 5 s
        // One request for every partition's consumer: each request a stream's cluster answers costs its servers
        // CPU, and this is asked every `consumerCheckMilliseconds` while nothing arrives.
        let names: Set<String>?
        do { names = try client.consumerNames(stream: stream.name) } catch { return true }
        for partition in partitions where !(names?.contains(Self.durable(partition)) ?? false) {
            log.warning(
                "the consumer \(Self.durable(partition)) is gone from the stream \(stream.name); binding again")
            return false
        }
        return true
    }

    /// The committer: binds the consumers and starts a fetcher for each partition, then commits, in one
    /// transaction, whatever the fetchers have handed over since the last commit, and acknowledges it. The
    /// partitions are fetched concurrently (each fetch is a round trip to the stream), and a commit runs while
    /// the next batches are fetched.
    func run() {
        defer { finished.withLock { $0 = true } }
        var backoff = 0
        var bound = false
        var lastRecorded: (lag: ConsumeLag, report: StreamReport, at: Int64)?
        var lastActivity = Clock.monotonicMilliseconds()
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
            if !bound {
                guard let subscriptions = bind() else {
                    backoff = min(5_000, max(250, backoff * 2))
                    continue
                }
                startFetchers(subscriptions)
                bound = true
                lastActivity = now
            }
            _ = arrived.wait(timeout: .now() + .milliseconds(Int(Self.idleWaitMilliseconds)))
            let (batches, failures) = inbox.withLock { inbox in
                defer {
                    inbox.batches.removeAll()
                    inbox.failures.removeAll()
                }
                return (inbox.batches, inbox.failures)
            }
            if !failures.isEmpty {
                // Bound again after the backoff: a consumer or the stream may be gone (said in the log). The
                // fetchers stop.
                inbox.withLock { $0.generation += 1 }
                _ = consumersExist()
                bound = false
                backoff = min(5_000, max(100, backoff * 2))
            }
            guard !batches.isEmpty else {
                updateLag()
                if bound, now - lastActivity >= Self.consumerCheckMilliseconds {
                    lastActivity = now
                    if !consumersExist() {
                        inbox.withLock { $0.generation += 1 }
                        bound = false
                    }
                }
                continue
            }
            lastActivity = now
            guard consume(batches) else {
                backoff = min(5_000, max(100, backoff * 2))
                continue
            }
            if failures.isEmpty { backoff = 0 }
            updateLag()
        }
        inbox.withLock {
            $0.generation += 1
            for batch in $0.batches { batch.fetcher.finished(acknowledging: []) }
            $0.batches.removeAll()
        }
    }

    /// The consuming lag from what the fetchers last saw of each partition.
    func updateLag() {
        let pending = inbox.withLock { $0.pending }
        let total = pending.values.reduce(0) { $0 + $1.records }
        let newest = pending.values.compactMap { $0.records > 0 ? $0.storedAt : nil }.max()
        let seconds =
            total == 0 ? 0 : newest.map { Double(max(0, Clock.wallMilliseconds() - $0 / 1_000_000)) / 1000 } ?? 0
        state.withLock {
            $0.lagRecords = total
            $0.lagSeconds = seconds
        }
    }

}
