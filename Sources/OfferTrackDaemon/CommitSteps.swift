import AttributionJoin
import Fleet
import JournalStore
import Metrics
import OfferTrackDomain
import Posix
import Synchronization

/// What the writer thread does for every commit, a socket batch's or the stream's: the append, timed for the
/// metrics, then the steps after it. No record waits for a checkpoint there (`CheckpointThread` runs them beside
/// the writer, which only waits, a bounded time, once the WAL is past its limit), and a chunk of learning users
/// or of a recompute runs after a commit only when no records wait, or when `chunkSpacingMilliseconds` passed
/// since the last one (so both still move on under a flood, taking a bounded share of the writer); an erasure's
/// rename (`ErasureRenameChunks`) goes on in chunks back to back, each letting waiting batches go first.
final class CommitSteps: @unchecked Sendable {
    // @unchecked: `lastChunkAt` and `hotUsers` are touched only on the writer thread; the rest is immutable or thread-safe.
    private let thread: JournalWriterThread
    private let metrics: DaemonMetrics
    private let clock: @Sendable () -> Int64
    private let log: Logger
    let checkpoints: CheckpointThread
    let renames: ErasureRenameChunks
    let learning: UserLearningChunks
    let recomputes: RecomputeChunks
    /// An edge's erasures as received, for its forwarder (nil elsewhere).
    let erasureOriginals: ErasureOriginals?
    /// The rules' shared users (rule 4.0), which the hot-user watch does not name; set by the daemon.
    let sharedUsers = Mutex(SharedUsers.defaults)
    /// Users who send more records in a day than a person would (writer thread only).
    private var hotUsers = HotUserWatch()
    /// When a chunk last ran after a commit (monotonic ms).
    private var lastChunkAt: Int64 = 0
    /// While records wait, the least time between two chunks run after commits.
    static let chunkSpacingMilliseconds: Int64 = 100

    init(
        thread: JournalWriterThread, metrics: DaemonMetrics, clock: @escaping @Sendable () -> Int64, log: Logger,
        checkpoints: CheckpointThread, renames: ErasureRenameChunks, learning: UserLearningChunks,
        recomputes: RecomputeChunks,
        erasureOriginals: ErasureOriginals? = nil
    ) {
        self.log = log
        self.erasureOriginals = erasureOriginals
        self.thread = thread
        self.metrics = metrics
        self.clock = clock
        self.checkpoints = checkpoints
        self.renames = renames
        self.learning = learning
        self.recomputes = recomputes
    }

    /// On the writer thread: appends `submissions` in one transaction, timed for the metrics.
    func append(_ submissions: [Submission], on writer: JournalWriter) -> Result<[AppendOutcome], JournalFailure> {
        thread.preconditionOnWriterThread()
        let started = Clock.monotonicMicroseconds()
        // An edge keeps its erasures as received before they are journaled renamed (the forwarder sends those).
        let erasures = erasureOriginals == nil ? [] : submissions.indices.filter { submissions[$0].isErasure }
        let noted =
            erasureOriginals?.note(erasureLines: erasures.map { (submissions[$0].record.id, submissions[$0].line) })
            ?? []
        do {
            let now = clock()
            let outcomes: [AppendOutcome]
            do {
                outcomes = try writer.append(submissions, receivedAt: now)
            } catch {
                erasureOriginals?.forget(Array(noted))
                throw error
            }
            // Kept only for erasures this batch journaled (a repeat or a conflict is not forwarded).
            let journaled = Set(
                erasures.compactMap { index -> String? in
                    guard case .accepted = outcomes[index] else { return nil }
                    return submissions[index].record.id
                })
            erasureOriginals?.forget(Array(noted.subtracting(journaled)))
            metrics.commitSeconds.observe(Clock.monotonicMicroseconds() &- started)
            metrics.commitStatementSeconds.observe(writer.lastCommitStatementMicroseconds)
            metrics.commitRecords.observe(UInt64(submissions.count))
            let joins = writer.joinCounts
            metrics.joinFromSummary.store(UInt64(joins.fromSummary))
            metrics.joinLateChecks.store(UInt64(joins.lateChecks))
            metrics.joinRefreshed.store(UInt64(joins.refreshed))
            watchHotUsers(writer.lastBatchUsers, now: now)
            // A duplicate erasure renames too when it names the person a renamed copy of it did not (the line as
            // first sent, after a forwarded renamed copy or a restore): its old frames must go as well.
            let erased = zip(submissions, outcomes).compactMap { submission, outcome in
                submission.isErasure && outcome.isJournaled ? submission.record.user : nil
            }
            // The WAL's older frames go once the erasure's rename is done (now, or after its last chunk), and then
            // the copies of the ids SQLite left in unused space.
            if !erased.isEmpty { renames.erasureCommitted(writer, erasedIDs: erased.map { Array($0.utf8) }) }
            return .success(outcomes)
        } catch {
            return .failure(JournalFailure(error))
        }
    }

    /// Counts each user's records of a commit: the largest count for the metric, every count for the daily watch.
    private func watchHotUsers(_ users: [(user: String, records: Int)], now: Int64) {
        guard let largest = users.map(\.records).max() else { return }
        metrics.commitLargestUserRecords.observe(UInt64(largest))
        let shared = sharedUsers.withLock { $0 }
        for (user, records) in users {
            if let line = hotUsers.note(user: user, records: records, shared: shared.contains(user), now: now) {
                log.warning(line)
            }
        }
    }

    /// On the writer thread, after a commit's answers are on their way: tells the checkpoint thread how long the
    /// WAL is, and moves learning users and a recompute on by a chunk when no records wait (or seldom when they do).
    func afterCommit(_ writer: JournalWriter) {
        thread.preconditionOnWriterThread()
        checkpoints.afterCommit(walFrames: writer.framesInWAL)
        // An erasure's rename goes on in chunks back to back (at most 25 ms each), a batch waiting for at most about
        // one chunk: one is queued if none is.
        renames.afterCommit(writer)
        let now = Clock.monotonicMilliseconds()
        if thread.recordsWait, now - lastChunkAt < Self.chunkSpacingMilliseconds { return }
        lastChunkAt = now
        learning.chunk(writer)
        recomputes.chunk(writer)
    }
}

extension Submission {
    /// Whether it is an `erasure` record (SPEC 3.5).
    var isErasure: Bool { if case .erasure = record.body { true } else { false } }
}
