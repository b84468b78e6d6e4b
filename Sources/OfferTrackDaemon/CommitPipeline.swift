import Dispatch
import Journal
import Metrics
import OfferTrackDomain
import Posix
import Synchronization

/// A record waiting to be journaled, and where its answer goes.
struct CommitJob: Sendable {
    let connection: UInt64
    let slot: UInt64
    let submission: Submission
    /// When the line was read (`Clock.monotonicMicroseconds`), for the acknowledgement latency.
    let readAtMicroseconds: UInt64
}

/// The writer's answer for one batch.
struct CommitResult: Sendable {
    let jobs: [CommitJob]
    /// One outcome per job, or the error that kept the whole batch from committing.
    let outcomes: Result<[AppendOutcome], JournalFailure>
}

/// One commit of records from the stream (a central daemon): how many, and how it went.
struct StreamCommit: Sendable {
    let records: Int
    let outcomes: Result<[AppendOutcome], JournalFailure>
}

/// How a recompute for new windows ended; `generation` tells a superseded one's (a second reload) from the last.
struct RecomputeOutcome: Sendable {
    let generation: Int
    let result: Result<Void, JournalFailure>
}

/// Failed checkpoints, as the event loop reports them.
struct CheckpointHealth: Sendable, Equatable {
    /// Checkpoints that failed since the daemon started.
    var failures = 0
    /// The last failure's message while checkpoints keep failing; nil once one succeeds.
    var failing: String?
}

/// Runs the journal's single writer on its own thread: one batch (one transaction) at a time, handed over by the
/// event loop, with completions posted back through an eventfd. While a batch commits, the event loop keeps
/// reading and validating, so the next batch groups everything that arrived meanwhile (group commit).
final class CommitPipeline: @unchecked Sendable {
    // @unchecked: `writer` is touched only on `queue`; `results` is guarded by its Mutex.
    private let writer: JournalWriter
    private let queue = DispatchQueue(label: "offertrack.journal-writer")
    private let results = Mutex<[CommitResult]>([])
    /// Finished recomputations of the derived tables (`recomputeDerivedTables`).
    private let recomputes = Mutex<[RecomputeOutcome]>([])
    /// Records read and waiting for the writer (`CommitQueue` keeps it current).
    private let backlog: Backlog
    /// Readable when results are waiting.
    let wakeup: EventCounter
    private let clock: @Sendable () -> Int64
    /// When the current round of learning users began (writer thread only).
    private var learningStartedAt: Int64?
    /// Whether a chunk of learning is queued on the writer thread (writer thread only).
    private var learningChunkQueued = false
    /// Checkpoint failures, shared with the event loop.
    let checkpointHealth = Mutex(CheckpointHealth())
    /// No checkpoint is tried before this time after a failure (writer thread only)…
    private var checkpointRetryAt: Int64 = 0
    /// …and the wait doubles with each failure in a row, from 1 s up to a minute.
    private var checkpointBackoff: Int64 = 0
    static let checkpointBackoffLimit: Int64 = 60_000

    private let metrics: DaemonMetrics

    init(
        writer: JournalWriter, metrics: DaemonMetrics, backlog: Backlog,
        clock: @escaping @Sendable () -> Int64 = Clock.wallMilliseconds
    ) throws(PosixError) {
        self.writer = writer
        self.backlog = backlog
        self.metrics = metrics
        self.clock = clock
        wakeup = try EventCounter()
    }

    /// Commits `jobs` in one transaction on the writer thread.
    func submit(_ jobs: [CommitJob]) {
        queue.async { [self] in
            let outcomes: Result<[AppendOutcome], JournalFailure>
            do {
                outcomes = .success(try append(jobs.map(\.submission)))
            } catch {
                outcomes = .failure(JournalFailure(error))
            }
            results.withLock { $0.append(CommitResult(jobs: jobs, outcomes: outcomes)) }
            wakeup.signal()
            afterCommit()
        }
    }

    /// On the writer thread: appends `submissions` in one transaction, timed for the metrics.
    private func append(_ submissions: [Submission]) throws -> [AppendOutcome] {
        let started = Clock.monotonicMicroseconds()
        let outcomes = try writer.append(submissions, receivedAt: clock())
        metrics.commitSeconds.observe(Clock.monotonicMicroseconds() &- started)
        metrics.commitRecords.observe(UInt64(submissions.count))
        return outcomes
    }

    /// On the writer thread, after a commit's answers are on their way: keeps the WAL short before the next
    /// batch (often when nothing waits, for latency; rarely while thousands of records queue up, for
    /// throughput), and moves learning users and a recompute on by one chunk.
    private func afterCommit() {
        checkpoint(frames: backlog.value.load(ordering: .relaxed) > 2048 ? 16_000 : 600)
        learnUsersChunk()
        recomputeChunk()
    }

    /// On the writer thread: checkpoints when the WAL is long enough, unless backing off after a failure. A
    /// failure is counted, logged and shown in `STATUS=` (the records stay safe in the WAL, which grows).
    private func checkpoint(frames: Int32) {
        let now = Clock.monotonicMilliseconds()
        guard now >= checkpointRetryAt else { return }
        do {
            guard try writer.checkpointIfNeeded(frames: frames) else { return }
            checkpointBackoff = 0
            let recovered = checkpointHealth.withLock { health -> Int? in
                defer { health.failing = nil }
                return health.failing == nil ? nil : health.failures
            }
            if let recovered {
                FileDescriptor.printError("offertrackd: checkpoints succeed again (\(recovered) failed since start)")
            }
        } catch {
            checkpointBackoff = min(max(checkpointBackoff * 2, 1000), Self.checkpointBackoffLimit)
            checkpointRetryAt = now + checkpointBackoff
            let failures = checkpointHealth.withLock { health in
                health.failures += 1
                health.failing = "\(error)"
                return health.failures
            }
            FileDescriptor.printError(
                "offertrackd: checkpoint failed (\(failures) since start; the WAL grows, records stay safe in it; "
                    + "next try in \(checkpointBackoff / 1000) s): \(error)")
        }
    }

    /// Starts teaching the writer which users the journal holds (`JournalWriter.learnJournaledUsers`): a chunk
    /// after each batch, and chunk after chunk whenever no records wait, so that a restarted daemon soon stops
    /// probing the journal for every new user.
    func startLearningUsers() {
        queue.async { [self] in learnUsersChunk() }
    }

    /// On the writer thread: learns one chunk if the writer still needs to, and while no records wait keeps one
    /// more chunk queued (never more than one, however many batches ran meanwhile).
    private func learnUsersChunk() {
        guard writer.needsToLearnUsers else { return }
        let startedAt = learningStartedAt ?? clock()
        learningStartedAt = startedAt
        do {
            if try writer.learnJournaledUsers() {
                if !learningChunkQueued, backlog.value.load(ordering: .relaxed) == 0 {
                    learningChunkQueued = true
                    queue.async { [self] in
                        learningChunkQueued = false
                        learnUsersChunk()
                    }
                }
                return
            }
        } catch {
            // A failed read is retried after the next batch; until then new users are probed as before.
            return
        }
        learningStartedAt = nil
        let learned = writer.learnedUsers
        FileDescriptor.printError(
            "offertrackd: the join knows every journaled user: \(learned.count) read in \(clock() - startedAt) ms, "
                + "filter \(learned.filterBytes / 1024) KiB")
    }

    /// Recomputes the derived tables under `settings` on the writer thread, a chunk of users at a time between
    /// batches (`JournalWriter.beginRecompute`): records keep being journaled and acknowledged meanwhile, each
    /// batch waiting for at most two chunks (the one after the batch before it, and one queued while nothing
    /// waited). The outcome is posted like a batch's (`takeRecomputes`). A recompute
    /// already running starts over under `settings`; its outcome carries `generation`.
    func recomputeDerivedTables(_ settings: AttributionSettings, generation: Int) {
        queue.async { [self] in
            recomputeGeneration = generation
            do {
                guard try writer.beginRecompute(settings) else { return post(.success(())) }
                recomputedUsers.store(0, ordering: .relaxed)
                recomputeChunk()
            } catch {
                post(.failure(JournalFailure(error)))
            }
        }
    }

    /// Drops a recompute in progress (the daemon is stopping).
    func abandonRecompute() {
        queue.async { [self] in writer.abandonRecompute() }
    }

    /// Users recomputed so far by the recompute in progress, for `STATUS=`.
    let recomputedUsers = Atomic<Int>(0)

    /// How long one chunk of a recompute may hold the write lock, in milliseconds.
    static let recomputeChunkMilliseconds: Int64 = 40

    /// On the writer thread: one chunk of the recompute in progress, if any, and while no records wait one more
    /// chunk queued (never more than one, however many batches ran meanwhile).
    private func recomputeChunk() {
        guard writer.recomputedUsers != nil else { return }
        let deadline = Clock.monotonicMilliseconds() + Self.recomputeChunkMilliseconds
        do {
            let finished = try writer.continueRecompute { Clock.monotonicMilliseconds() >= deadline }
            recomputedUsers.store(writer.recomputedUsers ?? 0, ordering: .relaxed)
            if finished { return post(.success(())) }
        } catch {
            return post(.failure(JournalFailure(error)))
        }
        if !recomputeChunkQueued, backlog.value.load(ordering: .relaxed) == 0 {
            recomputeChunkQueued = true
            queue.async { [self] in
                recomputeChunkQueued = false
                recomputeChunk()
            }
        }
    }

    /// Whether a chunk of the recompute is queued on the writer thread (writer thread only).
    private var recomputeChunkQueued = false
    /// The generation of the recompute in progress (writer thread only).
    private var recomputeGeneration = 0

    private func post(_ result: Result<Void, JournalFailure>) {
        let outcome = RecomputeOutcome(generation: recomputeGeneration, result: result)
        recomputes.withLock { $0.append(outcome) }
        wakeup.signal()
    }

    /// Takes the recompute outcomes posted since the last call (after `takeResults`, which drains the wakeup).
    func takeRecomputes() -> [RecomputeOutcome] {
        recomputes.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }

    /// Takes the results posted since the last call.
    func takeResults() -> [CommitResult] {
        wakeup.drain()
        return results.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }

    /// Commits records consumed from the stream (a central daemon) on the writer thread and waits for the
    /// outcome; what follows the commit is a socket batch's (`afterCommit`: the WAL kept short among others), and
    /// the outcome goes to the event loop like a batch's (`takeStreamCommits`: the corruption gate, `STATUS=`,
    /// metrics). Once the journal is found corrupt nothing more is committed from the stream.
    func commitFromStream(_ submissions: [Submission]) throws -> [AppendOutcome] {
        try queue.sync {
            if let corrupt = refusingStreamCommits.withLock({ $0 }) { throw corrupt }
            streamCommitStartedAt.store(Clock.monotonicMilliseconds(), ordering: .relaxed)
            defer { streamCommitStartedAt.store(0, ordering: .relaxed) }
            let result: Result<[AppendOutcome], JournalFailure>
            do { result = .success(try append(submissions)) } catch { result = .failure(JournalFailure(error)) }
            streamCommits.withLock { $0.append(StreamCommit(records: submissions.count, outcomes: result)) }
            wakeup.signal()
            let outcomes = try result.get()
            afterCommit()
            return outcomes
        }
    }

    /// Stream commits since the last call, for the event loop.
    func takeStreamCommits() -> [StreamCommit] {
        streamCommits.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }

    private let streamCommits = Mutex<[StreamCommit]>([])
    /// Set by the event loop once the journal is found corrupt: stream commits are refused from then on.
    let refusingStreamCommits = Mutex<JournalFailure?>(nil)
    /// When the stream commit on the writer began (monotonic ms), 0 when none: the watchdog's honesty.
    let streamCommitStartedAt = Atomic<Int64>(0)

    /// Runs `body` on the writer thread and waits for it (for rare work such as a rules-driven recompute).
    func runOnWriter<T: Sendable>(_ body: @Sendable (JournalWriter) throws -> T) rethrows -> T {
        try queue.sync { try body(writer) }
    }
}
