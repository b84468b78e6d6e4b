import AttributionJoin
import Fleet
import JournalStore
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
    /// Whether it ends the writer's batch (false for erasures' answers held until their rename was done).
    var finishesBatch = true
}

/// The socket's batches on the journal's writer thread: one batch (one transaction) at a time, handed over by the
/// event loop, with completions posted back through an eventfd. While a batch commits, the event loop keeps
/// reading and validating, so the next batch groups everything that arrived meanwhile (group commit). It also
/// holds the writer's other work, each in its own type: the steps after every commit (`CommitSteps`), the
/// checkpoints (`CheckpointThread`), learning users (`UserLearningChunks`), recomputes (`RecomputeChunks`) and
/// the stream's commits (`StreamCommits`).
final class CommitPipeline: Sendable {
    private let thread: JournalWriterThread
    private let steps: CommitSteps
    private let results: PostedResults
    /// Readable when results (of batches, recomputes or stream commits) are waiting.
    let wakeup: EventCounter
    let stream: StreamCommits

    init(
        writer: JournalWriter, metrics: DaemonMetrics, backlog: Backlog, log: Logger,
        clock: @escaping @Sendable () -> Int64 = Clock.wallMilliseconds,
        walLimitFrames: Int = CheckpointThread.defaultLimitFrames, erasureOriginals: ErasureOriginals? = nil
    ) throws(PosixError) {
        let thread = JournalWriterThread(writer: writer, backlog: backlog)
        let wakeup = try EventCounter()
        let results = PostedResults(wakeup: wakeup)
        let checkpoints = CheckpointThread(
            journalPath: writer.path, limitFrames: walLimitFrames, pauseDurations: metrics.writerPauseSeconds, log: log)
        let steps = CommitSteps(
            thread: thread, metrics: metrics, clock: clock, log: log, checkpoints: checkpoints,
            renames: ErasureRenameChunks(thread: thread, checkpoints: checkpoints, results: results, log: log),
            learning: UserLearningChunks(thread: thread, clock: clock, log: log),
            recomputes: RecomputeChunks(thread: thread, wakeup: wakeup), erasureOriginals: erasureOriginals)
        self.thread = thread
        self.wakeup = wakeup
        self.results = results
        self.steps = steps
        stream = StreamCommits(thread: thread, steps: steps, wakeup: wakeup)
    }

    /// The checkpoints beside the writer, and their health.
    var checkpoints: CheckpointThread { steps.checkpoints }
    /// An edge's erasures as received, for its forwarder (nil elsewhere).
    var erasureOriginals: ErasureOriginals? { steps.erasureOriginals }
    /// Learning users, started once the daemon is up.
    var learning: UserLearningChunks { steps.learning }
    /// Erasures' renames continued between batches, and the answers held until they are done.
    var renames: ErasureRenameChunks { steps.renames }
    /// Recomputes for new windows.
    var recomputes: RecomputeChunks { steps.recomputes }
    /// Sets the rules' shared users, which the hot-user watch does not name (at start and on each reload).
    func setSharedUsers(_ users: SharedUsers) { steps.sharedUsers.withLock { $0 = users } }

    /// The rules' shared users now (rule 4.0), as the last load or reload set them.
    var sharedUsers: SharedUsers { steps.sharedUsers.withLock { $0 } }

    /// Commits `jobs` in one transaction on the writer thread.
    func submit(_ jobs: [CommitJob]) {
        thread.asyncBatch { [self] writer in
            let outcomes = steps.append(jobs.map(\.submission), on: writer)
            let now = steps.renames.answersNow(jobs, outcomes, writer: writer)
            results.post(CommitResult(jobs: now.jobs, outcomes: now.outcomes))
            steps.afterCommit(writer)
        }
    }

    /// Takes the results posted since the last call.
    func takeResults() -> [CommitResult] { results.take() }

    /// Runs `body` on the writer thread and waits for it (for rare work such as recording the stream's lag).
    func runOnWriter<T: Sendable>(_ body: (JournalWriter) throws -> T) rethrows -> T {
        try thread.sync(body)
    }

    /// Closes the journal: the checkpoint connection first, so that the writer's close checkpoints and removes
    /// the WAL.
    func closeJournal() {
        steps.checkpoints.close()
        thread.sync { $0.close() }
    }
}
