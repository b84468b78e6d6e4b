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
/// `RenameTuning.rowsInBatch` records, and the rest are renamed here in chunks of at most `chunkMilliseconds`,
/// back to back whatever the other traffic (none, light or a flood): each chunk queues the next on the writer
/// thread, and a chunk lets the batches and records that wait go first once before it runs (so that no batch waits
/// for more than about one chunk, and a flood cannot stop the rename). The chunks pause while the checkpoints are
/// behind (`chunk`), for a second at most. The erasure's answer (and that of any erasure of the same person
/// committed meanwhile: a retried one's `duplicate` too) is held only while more than
/// `RenameTuning.rowsLeftAtAnswer` of the person's records are left to rename, so that what is left takes well
/// under SPEC 11's 60 s from the answer; once the last chunk has committed and the checkpoints caught up, the
/// checkpoint thread is asked to drop the WAL's older frames.
///
/// The drain waits (to its deadline) for a pending rename, so a clean stop leaves none (`verify` names one a kill left, and the next
/// start finishes it before `READY=1`). On an edge, a forwarder that lags may forward some of the person's earlier
/// records under the old name while the chunks run; the central journal renames them when the erasure reaches it
/// (SPEC 10).
final class ErasureRenameChunks: @unchecked Sendable {
    // @unchecked: `chunkQueued`, `yielded`, `waitingSince`, `lastCommitAt`, `finishing`, `startedAt`, `chunksRun`,
    // `retryMilliseconds` and `chunks` are touched only on the writer thread (its entry points check it:
    // `preconditionOnWriterThread`); `held` is guarded by its Mutex.
    private let thread: JournalWriterThread
    private let checkpoints: CheckpointThread
    private let results: PostedResults
    private let log: Logger
    /// Answers held, each until the rename of `key` (nil: of every key) has passed `point` (nil: has ended).
    private struct Held {
        let jobs: [CommitJob]
        let outcomes: [AppendOutcome]
        let key: Int64?
        let point: PendingRename.Position?
    }
    private let held = Mutex<[Held]>([])
    /// How many answers are held.
    private let heldAnswers = Atomic<Int>(0)
    private var chunkQueued = false
    /// Whether the queued chunk already let waiting batches or records go first (it does so once, then runs).
    private var yielded = false
    /// Since when the rename waits for the checkpoints (monotonic ms).
    private var waitingSince: Int64?
    /// Whether the last chunk has run and `finish` waits for the checkpoints (a chunk run meanwhile, for an erasure
    /// committed meanwhile, does not start a second wait).
    private var finishing = false
    /// When the pending renames' first chunk ran (monotonic ms), and the chunks since: for the log line at their end.
    private var startedAt: Int64?
    private var chunksRun = 0
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
    /// When a batch (or a stream commit) last committed (monotonic ms): other traffic, within `trafficMilliseconds`.
    private var lastCommitAt: Int64 = 0
    static let trafficMilliseconds: Int64 = 100
    /// How long a queued chunk that lets records go first waits for the event loop to hand them over.
    static let yieldMilliseconds = 1
    /// How long the rename waits before looking again when the checkpoints are behind.
    static let checkpointWaitMilliseconds = 5
    static let longestCheckpointWait: Int64 = 1000
    /// How long a failed chunk waits before it is tried again, the first time and at most.
    static let firstRetryMilliseconds = 100
    static let longestRetryMilliseconds = 5_000
    /// The wait before the next retry (writer thread only).
    private var retryMilliseconds = firstRetryMilliseconds

    /// Whether a rename may be pending or erasures' answers are held for one: the drain waits (the chunks go on
    /// back to back), so that a clean stop leaves no rename pending.
    var isRenaming: Bool { mayBePending || heldAnswers.load(ordering: .relaxed) > 0 }

    /// The ids of the people whose erasures committed since the last request to forget old frames: their copies in
    /// unused space are swept once every rename is done (writer thread only).
    private var erasedIDs: [[UInt8]] = []

    /// The ids collected so far, handed over once.
    private func takeErasedIDs() -> [[UInt8]] {
        defer { erasedIDs.removeAll() }
        return erasedIDs
    }

    init(thread: JournalWriterThread, checkpoints: CheckpointThread, results: PostedResults, log: Logger) {
        self.thread = thread
        self.checkpoints = checkpoints
        self.results = results
        self.log = log
    }

    /// On the writer thread, after a commit that journaled an erasure: with no rename pending the WAL's older
    /// frames can go now (`CheckpointThread.requestForgettingOldFrames`); otherwise the chunks start, and the
    /// frames go once the last one commits.
    func erasureCommitted(_ writer: JournalWriter, erasedIDs: [[UInt8]]) {
        thread.preconditionOnWriterThread()
        self.erasedIDs.append(contentsOf: erasedIDs)
        mayBePending = true
        do {
            guard try writer.pendingRenameKeys().isEmpty else { return queueChunk(afterMilliseconds: 0) }
        } catch {
            // A rename may be pending: the chunks find out, retried on a timer until they can read the journal.
            log.error("cannot read the pending renames after an erasure (retried in \(retryMilliseconds) ms): \(error)")
            return retryChunk()
        }
        mayBePending = false
        checkpoints.requestForgettingOldFrames(erasedIDs: takeErasedIDs())
    }

    /// On the writer thread, after a batch committed: the answers to give now, without those of its erasures whose
    /// person has more than `RenameTuning.rowsLeftAtAnswer` records left to rename (each held until the chunks got
    /// that far, then posted as a result of its own; an erasure of someone else, or of a person with fewer records
    /// left, is answered now).
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
            let place = Result { () throws -> (key: Int64, point: PendingRename.Position)? in
                guard let key = try writer.pendingRenameKey(ofRecord: jobs[index].submission.record.id),
                    let point = try writer.renamePoint(key: key, leaving: writer.renameTuning.rowsLeftAtAnswer)
                else { return nil }
                return (key, point)
            }
            switch place {
            case .success(nil):
                kept.append(index)
            case .success(let place?):
                waiting.append(Held(jobs: [jobs[index]], outcomes: [all[index]], key: place.key, point: place.point))
            case .failure:
                waiting.append(Held(jobs: [jobs[index]], outcomes: [all[index]], key: nil, point: nil))
            }
        }
        guard !waiting.isEmpty else { return (jobs, outcomes) }
        held.withLock { $0 += waiting }
        heldAnswers.add(waiting.count, ordering: .relaxed)
        return (kept.map { jobs[$0] }, .success(kept.map { all[$0] }))
    }

    /// On the writer thread, after every commit: a chunk of the pending rename, if any, is queued (never more than
    /// one, however many batches ran meanwhile; it lets those that wait go first).
    func afterCommit(_ writer: JournalWriter) {
        thread.preconditionOnWriterThread()
        lastCommitAt = Clock.monotonicMilliseconds()
        guard mayBePending else { return }
        queueChunk(afterMilliseconds: 0)
    }

    /// One chunk of the pending rename, then the next one queued while any is pending.
    private func chunk(_ writer: JournalWriter) {
        // While `finish` waits, nothing is left to rename: it queues a chunk itself if an erasure came meanwhile.
        guard mayBePending, !finishing else { return }
        // The rename waits for the checkpoints, for a second at most (a reader holding an old snapshot keeps them
        // from copying): past half the WAL's limit until they copied it all (so that the next commit starts the WAL
        // over: a WAL at its limit would make every commit wait); below it, while other traffic commits, until
        // they have less than a passive checkpoint's frames to copy (under a flood the disk is what limits the
        // rename, and frames it writes faster than they are copied would only bring that limit sooner), and with
        // none, while they are a quarter of the limit behind (the copies then overlap the chunks).
        let now = Clock.monotonicMilliseconds()
        let frames = writer.framesInWAL
        let uncopied = checkpoints.uncopiedFrames(walFrames: frames)
        let traffic = thread.recordsWait || now - lastCommitAt < Self.trafficMilliseconds
        let behind =
            frames >= checkpoints.limitFrames / 2
            ? uncopied > 0 : uncopied >= (traffic ? checkpoints.passiveFrames : checkpoints.limitFrames / 4)
        if behind, now - (waitingSince ?? now) < Self.longestCheckpointWait {
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
            // Retried on a timer, so that an idle daemon answers the held erasures too.
            log.error("an erasure's rename could not continue (retried in \(retryMilliseconds) ms): \(error)")
            return retryChunk()
        }
        retryMilliseconds = Self.firstRetryMilliseconds
        startedAt = startedAt ?? deadline - Self.chunkMilliseconds
        chunksRun += 1
        checkpoints.afterCommit(walFrames: writer.framesInWAL)
        #if OFFERTRACK_FAULT_HOOKS
            chunks += 1
            if let kill = writer.renameTuning.killAfterChunk, chunks >= kill {
                FileDescriptor.printError("offertrackd: rename test hook: SIGKILL after chunk \(chunks)")
                CurrentProcess.killImmediately()
            }
        #endif
        let pending: [Int64: PendingRename.Position]
        do {
            pending = try writer.pendingRenames()
        } catch {
            log.error("cannot read the pending renames after a chunk (retried in \(retryMilliseconds) ms): \(error)")
            return retryChunk()
        }
        release(pending: pending)
        if pending.isEmpty { return finish(writer) }
        if remaining { queueChunk(afterMilliseconds: 0) }
    }

    /// After the last chunk: once the checkpoints have copied all but a passive checkpoint's frames of the WAL (a
    /// second at most), the checkpoint thread is asked to drop its older frames; the `TRUNCATE` that does it, which
    /// commits wait for, then has little left to copy. (`since`: when the wait began, for its own next looks.)
    private func finish(_ writer: JournalWriter, waitingSince since: Int64? = nil) {
        guard since != nil || !finishing else { return }
        finishing = true
        let now = Clock.monotonicMilliseconds()
        if checkpoints.uncopiedFrames(walFrames: writer.framesInWAL) >= checkpoints.passiveFrames,
            now - (since ?? now) < Self.longestCheckpointWait
        {
            checkpoints.requestCopy()
            thread.async(afterMilliseconds: Self.checkpointWaitMilliseconds) { [self] writer in
                finish(writer, waitingSince: since ?? now)
            }
            return
        }
        finishing = false
        // An erasure committed meanwhile may have started another rename: its chunks go on, and finish after it.
        guard (try? writer.pendingRenameKeys().isEmpty) == true else { return queueChunk(afterMilliseconds: 0) }
        mayBePending = false
        checkpoints.requestForgettingOldFrames(erasedIDs: takeErasedIDs())
        let took = now - (startedAt ?? now)
        log.info("an erasure's rename is done: \(chunksRun) chunks over \(took) ms")
        (startedAt, chunksRun) = (nil, 0)
    }

    /// After a failure: one more chunk queued `retryMilliseconds` from now, each failure in a row doubling the
    /// wait up to `longestRetryMilliseconds`.
    private func retryChunk() {
        queueChunk(afterMilliseconds: retryMilliseconds)
        retryMilliseconds = min(retryMilliseconds * 2, Self.longestRetryMilliseconds)
    }

    /// Queues one more chunk on the writer thread (never more than one, however many batches ran meanwhile).
    /// When it comes up while a batch is queued behind it, or records wait for the event loop to hand them over,
    /// it lets them go first once (queued again behind them), then runs: a batch waits for about one chunk at
    /// most, and a flood cannot keep the rename from moving on.
    private func queueChunk(afterMilliseconds milliseconds: Int) {
        guard !chunkQueued else { return }
        chunkQueued = true
        thread.async(afterMilliseconds: milliseconds) { [self] writer in
            chunkQueued = false
            if !yielded, thread.batchWaits || thread.recordsWait {
                yielded = true
                return queueChunk(afterMilliseconds: thread.batchWaits ? 0 : Self.yieldMilliseconds)
            }
            yielded = false
            chunk(writer)
        }
    }

    /// Posts the held answers whose renames got far enough: their key no longer pending or past their point.
    private func release(pending: [Int64: PendingRename.Position]) {
        func isDone(_ answers: Held) -> Bool {
            guard let key = answers.key else { return pending.isEmpty }
            guard let at = pending[key] else { return true }
            return answers.point.map { at >= $0 } ?? false
        }
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
