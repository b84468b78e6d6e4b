import AttributionJoin
import JournalStore
import OfferTrackDomain
import Posix
import Synchronization

/// The answers the writer thread posts for the event loop (`CommitPipeline.takeResults`), readable on `wakeup`.
final class PostedResults: Sendable {
    private let results = Mutex<[CommitResult]>([])
    let wakeup: EventCounter

    init(wakeup: EventCounter) { self.wakeup = wakeup }

    func post(_ result: CommitResult) {
        results.withLock { $0.append(result) }
        wakeup.signal()
    }

    func take() -> [CommitResult] {
        wakeup.drain()
        return results.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }
}

/// An erasure's rename of a large person (SPEC 11, schema 13): its batch renames the `users` entry and at most
/// `RenameTuning.rowsInBatch` records, and the rest are renamed here, a chunk of at most `chunkMilliseconds`
/// after every commit (so no batch waits for more than about one chunk, and under a flood of full batches the
/// rename takes a bounded share of the writer), and chunk after chunk while no records wait, paced by the
/// checkpoints. The erasure's answer (and that of any erasure of the same person committed meanwhile: a retried
/// one's `duplicate` too) is held until the person's rename has committed; then the checkpoint thread is asked to
/// drop the WAL's older frames.
///
/// The drain waits (to its deadline) for a pending rename, so a clean stop leaves none (`verify` names one a kill left, and the next
/// start finishes it before `READY=1`). On an edge, a forwarder that lags may forward some of the person's earlier
/// records under the old name while the chunks run; the central journal renames them when the erasure reaches it
/// (SPEC 10).
final class ErasureRenameChunks: @unchecked Sendable {
    // @unchecked: `chunkQueued`, `waitingSince`, `retryMilliseconds` and `chunks` are touched only on the writer
    // thread (its entry points check it: `preconditionOnWriterThread`); `held` is guarded by its Mutex.
    private let thread: JournalWriterThread
    private let checkpoints: CheckpointThread
    private let results: PostedResults
    private let log: Logger
    /// Answers held, each until the renames of `waitsFor` (nil: of every key) have committed.
    private struct Held {
        let jobs: [CommitJob]
        let outcomes: [AppendOutcome]
        let waitsFor: Set<Int64>?
    }
    private let held = Mutex<[Held]>([])
    /// How many answers are held.
    private let heldAnswers = Atomic<Int>(0)
    private var chunkQueued = false
    /// Since when the rename waits for the checkpoints (monotonic ms).
    private var waitingSince: Int64?
    #if OFFERTRACK_FAULT_HOOKS
        /// Chunks committed by this daemon (for the test hook `RenameTuning.killAfterChunk`, debug builds only).
        private var chunks = 0
        /// Chunks failed on purpose so far (the test hook `RenameTuning.failChunks`).
        private var failedChunks = 0
        private struct TestHookFailure: Error, CustomStringConvertible {
            let description: String
        }
    #endif
    /// Whether a rename may be pending: an erasure committed since none was (written on the writer thread).
    private let renaming = Atomic<Bool>(false)
    private var mayBePending: Bool {
        get { renaming.load(ordering: .relaxed) }
        set { renaming.store(newValue, ordering: .relaxed) }
    }
    /// How long one chunk may hold the write lock, in milliseconds.
    static let chunkMilliseconds: Int64 = 25
    /// How long the rename waits before looking again when the checkpoints are behind.
    static let checkpointWaitMilliseconds = 5
    static let longestCheckpointWait: Int64 = 1000
    /// How long a failed chunk waits before it is tried again, the first time and at most.
    static let firstRetryMilliseconds = 100
    static let longestRetryMilliseconds = 5_000
    /// The wait before the next retry (writer thread only).
    private var retryMilliseconds = firstRetryMilliseconds

    /// Whether a rename may be pending or erasures' answers are held for one: the drain waits (chunks run back to
    /// back once no records wait), so that a clean stop leaves no rename pending.
    var isRenaming: Bool { mayBePending || heldAnswers.load(ordering: .relaxed) > 0 }

    init(thread: JournalWriterThread, checkpoints: CheckpointThread, results: PostedResults, log: Logger) {
        self.thread = thread
        self.checkpoints = checkpoints
        self.results = results
        self.log = log
    }

    /// On the writer thread, after a commit that journaled an erasure: with no rename pending the WAL's older
    /// frames can go now (`CheckpointThread.requestForgettingOldFrames`); otherwise once the last chunk commits.
    func erasureCommitted(_ writer: JournalWriter) {
        thread.preconditionOnWriterThread()
        mayBePending = true
        do {
            guard try writer.pendingRenameKeys().isEmpty else { return }
        } catch {
            // A rename may be pending: the chunks find out, retried on a timer until they can read the journal.
            log.error("cannot read the pending renames after an erasure (retried in \(retryMilliseconds) ms): \(error)")
            return retryChunk()
        }
        mayBePending = false
        checkpoints.requestForgettingOldFrames()
    }

    /// On the writer thread, after a batch committed: the answers to give now, without those of its erasures whose
    /// person's rename is pending (each held until that rename is done, then posted as a result of its own; an
    /// erasure of someone else, a small person's, is answered now).
    func answersNow(
        _ jobs: [CommitJob], _ outcomes: Result<[AppendOutcome], JournalFailure>, writer: JournalWriter
    ) -> (jobs: [CommitJob], outcomes: Result<[AppendOutcome], JournalFailure>) {
        thread.preconditionOnWriterThread()
        guard mayBePending, case .success(let all) = outcomes else { return (jobs, outcomes) }
        var kept: [Int] = []
        var waiting: [Held] = []
        for index in jobs.indices {
            // An erasure journaled now or before may wait for its rename; a conflicting or expired one was not.
            guard jobs[index].submission.isErasure, all[index].isJournaled else {
                kept.append(index)
                continue
            }
            // Unreadable: held until no rename is pending.
            let key = Result { try writer.pendingRenameKey(ofRecord: jobs[index].submission.record.id) }
            if case .success(nil) = key {
                kept.append(index)
                continue
            }
            let waitsFor: Set<Int64>? = if case .success(let pending?) = key { [pending] } else { nil }
            waiting.append(Held(jobs: [jobs[index]], outcomes: [all[index]], waitsFor: waitsFor))
        }
        guard !waiting.isEmpty else { return (jobs, outcomes) }
        held.withLock { $0 += waiting }
        heldAnswers.add(waiting.count, ordering: .relaxed)
        return (kept.map { jobs[$0] }, .success(kept.map { all[$0] }))
    }

    /// On the writer thread, after every commit: one chunk of the pending rename, if any, and while no records
    /// wait one more chunk queued (never more than one, however many batches ran meanwhile).
    func chunk(_ writer: JournalWriter) {
        thread.preconditionOnWriterThread()
        guard mayBePending else { return }
        // The rename waits for the checkpoints while they have more than a passive checkpoint's frames to copy
        // (so the `TRUNCATE` after the last chunk, which commits wait for, has little to copy), and past half
        // the limit until they copied it all (so that the next commit starts the WAL over): a WAL at its limit
        // would make every commit wait, and the `TRUNCATE` after the last chunk copy all of it. For a second at
        // most (a reader holding an old snapshot keeps them from copying).
        let now = Clock.monotonicMilliseconds()
        let frames = writer.framesInWAL
        let uncopied = checkpoints.uncopiedFrames(walFrames: frames)
        let limit = checkpoints.limitFrames
        if frames >= limit / 2 ? uncopied > 0 : uncopied >= checkpoints.passiveFrames,
            now - (waitingSince ?? now) < Self.longestCheckpointWait
        {
            waitingSince = waitingSince ?? now
            checkpoints.requestCopy()
            return queueChunk(afterMilliseconds: Self.checkpointWaitMilliseconds)
        }
        waitingSince = nil
        let deadline = Clock.monotonicMilliseconds() + Self.chunkMilliseconds
        let remaining: Bool
        do {
            #if OFFERTRACK_FAULT_HOOKS
                if failedChunks < writer.renameTuning.failChunks {
                    failedChunks += 1
                    throw TestHookFailure(description: "rename test hook: chunk \(failedChunks) fails")
                }
            #endif
            remaining = try writer.continuePendingRenames { Clock.monotonicMilliseconds() >= deadline }
        } catch {
            // Retried on a timer (and after the next commit), so that an idle daemon answers the held erasures too.
            log.error("an erasure's rename could not continue (retried in \(retryMilliseconds) ms): \(error)")
            return retryChunk()
        }
        retryMilliseconds = Self.firstRetryMilliseconds
        checkpoints.afterCommit(walFrames: writer.framesInWAL)
        #if OFFERTRACK_FAULT_HOOKS
            chunks += 1
            if let kill = writer.renameTuning.killAfterChunk, chunks >= kill {
                FileDescriptor.printError("offertrackd: rename test hook: SIGKILL after chunk \(chunks)")
                CurrentProcess.killImmediately()
            }
        #endif
        let pending: Set<Int64>
        do {
            pending = try writer.pendingRenameKeys()
        } catch {
            log.error("cannot read the pending renames after a chunk (retried in \(retryMilliseconds) ms): \(error)")
            return retryChunk()
        }
        release(pending: pending)
        if pending.isEmpty {
            mayBePending = false
            checkpoints.requestForgettingOldFrames()
            return
        }
        if remaining, !thread.recordsWait { queueChunk(afterMilliseconds: 0) }
    }

    /// After a failure: one more chunk queued `retryMilliseconds` from now, each failure in a row doubling the
    /// wait up to `longestRetryMilliseconds`.
    private func retryChunk() {
        queueChunk(afterMilliseconds: retryMilliseconds)
        retryMilliseconds = min(retryMilliseconds * 2, Self.longestRetryMilliseconds)
    }

    /// Queues one more chunk on the writer thread (never more than one, however many batches ran meanwhile).
    private func queueChunk(afterMilliseconds milliseconds: Int) {
        guard !chunkQueued else { return }
        chunkQueued = true
        thread.async(afterMilliseconds: milliseconds) { [self] writer in
            chunkQueued = false
            // A batch handed over meanwhile goes first: the chunk after its commit continues.
            if !thread.batchWaits { chunk(writer) }
        }
    }

    /// Posts the held answers whose renames are no longer pending.
    private func release(pending: Set<Int64>) {
        func isDone(_ answers: Held) -> Bool { answers.waitsFor?.isDisjoint(with: pending) ?? pending.isEmpty }
        let ready = held.withLock { held in
            defer { held.removeAll(where: isDone) }
            return held.filter(isDone)
        }
        for answers in ready {
            heldAnswers.subtract(answers.jobs.count, ordering: .relaxed)
            results.post(CommitResult(jobs: answers.jobs, outcomes: .success(answers.outcomes), finishesBatch: false))
        }
    }
}
