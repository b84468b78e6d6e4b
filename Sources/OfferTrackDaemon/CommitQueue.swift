import JournalStore
import Synchronization

/// The event loop's side of the group commit, in one place: the records waiting for the writer (one FIFO per
/// connection, taken round-robin: `FairQueue`), the batch caps, what the waiting records cost and which
/// connections are held back for it, and the one batch the writer has. `CommitPipeline` runs the writer thread.
struct CommitQueue {
    /// The caps on batches and on the memory records waiting may hold.
    struct Limits: Sendable {
        /// Most records in one transaction, whoever waits: a line waits for the batch committing when it arrives
        /// and its own, at most two of these (~30 ms each in a release build). One connection alone gets no
        /// larger batch: it is read while the writer commits, so its batches are this size anyway, and a lone
        /// pipelining client measured the same with a cap of 8,192 (300,000 returning-user records: 15.9 s
        /// against 15.95 s, three runs each), while a newcomer arriving behind such a batch waited for 4,096.
        var maxBatch = 2048
        /// Most of one connection's records in a batch while others wait (`FairQueue`): a well-behaved client's
        /// line goes into the next batch however many lines other clients have queued.
        var batchQuantum = 1024
        /// Connections with records queued stop being read while this many bytes of records wait for the writer
        /// (connections with none queued are still read, so a newcomer gets its line in); reading resumes below
        /// half of it.
        var maxQueuedBytes = 32 << 20

        /// The daemon's limits.
        static let daemon = Limits()
    }

    /// What one waiting record costs against `Limits.maxQueuedBytes`: its line and what holding it costs besides
    /// (the parsed record and its strings, the job, the slot, the allocator's rounding). Measured: the daemon's
    /// peak RSS under 64 pipelining clients grows by about 1.5 MiB per MiB of the old estimate (line + 400),
    /// about 1,000 bytes a 265-byte record, hence 750 besides the line.
    static func cost(of line: [UInt8]) -> Int { line.count + 750 }

    let limits: Limits
    /// Records waiting, as the writer thread reads it (to size checkpoints and to learn users when idle).
    let backlog: Backlog
    private var waiting = FairQueue()
    /// Bytes of waiting and committing records (`cost(of:)`), over all connections and per connection.
    private(set) var queuedBytes = 0
    private var queuedBytesByConnection: [UInt64: Int] = [:]
    /// Connections not read because of `queuedBytes`: read again once it is below half the cap.
    private var heldBack: Set<UInt64> = []
    /// When the batch with the writer was handed over; nil while the writer has no batch.
    private(set) var writerBusySince: Int64?
    /// Records in the batch with the writer.
    private(set) var inFlight = 0

    init(limits: Limits = .daemon, backlog: Backlog = Backlog()) {
        self.limits = limits
        self.backlog = backlog
    }

    /// Records waiting (not counting the batch with the writer).
    var count: Int { waiting.count }
    var isEmpty: Bool { waiting.isEmpty }
    /// Records waiting or with the writer.
    var queuedRecords: Int { waiting.count + inFlight }

    /// Queues `job` behind its connection's others and counts its cost.
    mutating func append(_ job: CommitJob) {
        waiting.append(job)
        let cost = Self.cost(of: job.submission.line)
        queuedBytes += cost
        queuedBytesByConnection[job.connection, default: 0] += cost
        publishBacklog()
    }

    /// The next batch for the writer, or nil while it has one (or nothing waits): one round-robin pass over the
    /// waiting connections. The writer counts as busy from `now`.
    mutating func takeBatch(now: Int64) -> [CommitJob]? {
        guard writerBusySince == nil, !waiting.isEmpty else { return nil }
        let batch = waiting.takeBatch(limit: limits.maxBatch, quantum: limits.batchQuantum)
        writerBusySince = now
        inFlight = batch.count
        publishBacklog()
        return batch
    }

    /// The writer answered for its batch (committed or not): it can take the next one.
    mutating func batchFinished() {
        writerBusySince = nil
        inFlight = 0
    }

    /// Takes every waiting record (the journal is corrupt, or the drain deadline passed); `release` each.
    mutating func removeAll() -> [CommitJob] {
        let all = waiting.removeAll()
        publishBacklog()
        return all
    }

    /// `job` left the queue (answered or refused): its cost no longer counts.
    mutating func release(_ job: CommitJob) {
        let cost = Self.cost(of: job.submission.line)
        queuedBytes -= cost
        let left = (queuedBytesByConnection[job.connection] ?? 0) - cost
        queuedBytesByConnection[job.connection] = left > 0 ? left : nil
    }

    /// Bytes of `connection`'s records waiting or committing.
    func queuedBytes(of connection: UInt64) -> Int { queuedBytesByConnection[connection] ?? 0 }

    /// Whether `connection` must not be read because of the records waiting: only while over the cap, and only
    /// a connection with records of its own queued. A connection held back is remembered for `takeResumable`.
    mutating func mustHoldBack(_ connection: UInt64) -> Bool {
        guard queuedBytes >= limits.maxQueuedBytes, queuedBytes(of: connection) > 0 else { return false }
        heldBack.insert(connection)
        return true
    }

    /// The connections held back, to be read again, once the records waiting are below half the cap.
    mutating func takeResumable() -> Set<UInt64> {
        guard queuedBytes < limits.maxQueuedBytes / 2, !heldBack.isEmpty else { return [] }
        defer { heldBack.removeAll() }
        return heldBack
    }

    /// `connection` closed: it is no longer held back.
    mutating func forget(_ connection: UInt64) {
        heldBack.remove(connection)
    }

    private func publishBacklog() {
        backlog.value.store(waiting.count, ordering: .relaxed)
    }
}

/// The number of records waiting for the writer, shared by the event loop (`CommitQueue`, which alone writes it)
/// with the writer thread (`CommitPipeline`, which reads it).
final class Backlog: Sendable {
    let value = Atomic<Int>(0)
}
