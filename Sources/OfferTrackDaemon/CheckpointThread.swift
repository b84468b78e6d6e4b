import Dispatch
import JournalStore
import Metrics
import Posix
import Synchronization

/// Failed checkpoints, as the event loop reports them.
struct CheckpointHealth: Sendable, Equatable {
    /// Checkpoints that failed since the daemon started.
    var failures = 0
    /// The last failure's message while checkpoints keep failing; nil once one succeeds.
    var failing: String?
    /// Blocking checkpoints (the WAL past `CheckpointThread.limitFrames`) that finished, since the daemon started.
    var blocking = 0
    /// Times the writer paused after a commit for a checkpoint (a blocking one, or an erasure's `TRUNCATE`), and
    /// for how long in all (ms): the records waiting for the next commit waited as long.
    var writerPauses = 0
    var writerPauseMilliseconds: Int64 = 0
    /// `TRUNCATE` checkpoints that emptied the WAL file after erasures (SPEC 11), since the daemon started.
    var erasureTruncates = 0
}

/// Keeps the journal's WAL short from a thread and a connection of its own (`WALCheckpointer`), so that no commit,
/// and no record waiting for one, waits for a checkpoint that can run beside the writer:
/// - once the WAL holds `passiveFrames` frames more than were checkpointed, a `PASSIVE` checkpoint copies them
///   while the writer goes on committing; when it ends before the next commit begins, that commit starts the WAL
///   over (at 10,000 records/s the writer pauses often enough for that); once the WAL is longer than
///   `floodPassiveFrames` (the writer did not pause), only every `floodPassiveFrames` new frames;
/// - once the WAL holds `limitFrames` frames (a flood, where the writer never pauses), the writer waits at most
///   `writerWaitMilliseconds` while this thread copies what the passive checkpoints left and starts the WAL over
///   (`RESTART`, or `TRUNCATE` when the file has grown past twice the limit), waiting at most
///   `blockingTimeoutMilliseconds` for readers;
/// - a reader holding an old snapshot keeps frames it may need from being copied: the WAL then grows by what is
///   committed until the reader ends (no blocking checkpoint is tried meanwhile, it would only hold commits back),
///   and the first checkpoint after copies it all and truncates the file.
///
/// A failure (a full disk, an I/O error on the database file) is counted, logged and shown in `STATUS=`, and the
/// next try waits 1 s, doubling up to a minute; the records stay safe in the WAL, which grows meanwhile.
final class CheckpointThread: @unchecked Sendable {
    // @unchecked: `checkpointer`, `retryAt` and `backoff` are touched only on the checkpoint thread (`run`);
    // `state`, `requests` and `health` are guarded by their Mutexes.
    private let checkpointer: WALCheckpointer
    private let walPath: String
    private let log: Logger
    /// The copies of erased ids in the journal's unused space, zeroed after the `TRUNCATE` that follows a rename.
    private let sweep: ErasedBytesSweep

    /// Work for the checkpoint thread, in order.
    private enum Request {
        case passive
        /// A blocking checkpoint; `done` is signalled when it ends (the writer waits a bounded time for it).
        case blocking(done: DispatchSemaphore)
        /// An erasure committed: every frame older than it goes (a `TRUNCATE`), tried each second until no reader
        /// needs them (SPEC 11); `done`, when given, is signalled after this try (the writer waits a bounded time).
        case forgetOldFrames(done: DispatchSemaphore?)
        /// Close the connection and end the thread.
        case close(done: DispatchSemaphore)
    }
    private let requests = Mutex<[Request]>([])
    /// Signalled once per request queued.
    private let wake = DispatchSemaphore(value: 0)

    /// New frames that start a passive checkpoint while the WAL is shorter than `floodPassiveFrames` (fewer when
    /// the limit is small): the writer pauses, so a checkpoint that ends lets the next commit start the WAL over.
    let passiveFrames: Int
    /// New frames that start one once the WAL is longer than this (a flood: the writer never pauses, and the WAL
    /// starts over only at its limit): 8 MiB, so that the pages dirtied in commit after commit (the tables' last
    /// pages, the indexes' inner pages, the per-user index's recent level) are copied once for many commits.
    let floodPassiveFrames: Int
    /// The WAL's limit by default, in frames (of a 4 KiB page and a 24-byte header: 32 MiB): past it the writer
    /// waits for a blocking checkpoint. `DaemonEnvironment.walLimitFrames` sets another (tests use a small one).
    static let defaultLimitFrames = DaemonEnvironment.defaultWALLimitFrames
    let limitFrames: Int
    static let frameBytes: Int64 = 4096 + 24
    /// How long the blocking checkpoint waits for each lock (readers of the WAL).
    static let blockingTimeoutMilliseconds: Int32 = 100
    /// How long the writer waits for a blocking checkpoint before it commits again anyway.
    static let writerWaitMilliseconds = 250
    /// After a blocking checkpoint could not finish (a reader), how long until the writer waits for one again.
    static let blockingRetryMilliseconds: Int64 = 1000
    static let backoffLimitMilliseconds: Int64 = 60_000
    /// For how long after an erasure the writer pauses, once a second, for a try at its old frames.
    static let forgetPauseMilliseconds: Int64 = 60_000
    /// After a `TRUNCATE` for erasures completed, how long until the next one (erasures committed meanwhile wait
    /// and go together): a steady flow of erasures empties the WAL file at most this often, not after each one,
    /// since a file emptied and grown again costs the disk its blocks' allocation and discard.
    static let forgetSpacingMilliseconds: Int64 = 5_000

    /// What the writer thread and this thread share.
    private struct State {
        /// Frames of the WAL known to be in the database file (0 once the WAL started over).
        var checkpointedFrames = 0
        /// Whether a passive checkpoint is queued or running.
        var queued = false
        /// No blocking checkpoint before this time (monotonic ms): the last one could not finish.
        var blockingRetryAt: Int64 = 0
        /// Whether a blocking checkpoint is queued or running: the writer waits for each one once, not again after
        /// every commit while it runs (a WAL made long by one large transaction, such as an export's publication,
        /// takes more than the writer's wait to copy).
        var blockingInFlight = false
        /// Since when an erasure's old frames wait for a `TRUNCATE` (monotonic ms): for up to a minute the writer
        /// pauses after a commit, at most once a second and a bounded time, for a try, so that a steady flow of
        /// commits cannot keep the checkpoint from the write lock.
        var forgetRequestedAt: Int64?
        /// When the writer last paused for one.
        var lastForgetPause: Int64 = 0
        /// No try before this time (monotonic ms): `forgetSpacingMilliseconds` after the last complete one.
        var forgetNotBefore: Int64 = 0
    }
    private let state = Mutex(State())
    /// Checkpoint failures and blocking checkpoints, shared with the event loop.
    let health = Mutex(CheckpointHealth())
    /// Each pause of the writer for a checkpoint, in microseconds (the daemon's metrics' histogram).
    private let pauseDurations: Histogram?
    /// No checkpoint is tried before this time after a failure (checkpoint thread only)…
    private var retryAt: Int64 = 0
    /// …and the wait doubles with each failure in a row, from 1 s up to a minute.
    private var backoff: Int64 = 0
    /// Since when an erasure's old frames wait for a `TRUNCATE` (monotonic ms; checkpoint thread only), and
    /// whether the wait was logged.
    private var forgettingSince: Int64?
    private var forgettingLogged = false
    /// When the last `TRUNCATE` for an erasure's old frames was tried (monotonic ms; checkpoint thread only).
    private var lastForgetTry: Int64?

    init(
        journalPath: String, limitFrames: Int = CheckpointThread.defaultLimitFrames, pauseDurations: Histogram? = nil,
        log: Logger
    ) {
        self.log = log
        self.pauseDurations = pauseDurations
        self.limitFrames = max(limitFrames, 64)
        passiveFrames = min(600, self.limitFrames / 2)
        floodPassiveFrames = max(passiveFrames, min(2048, self.limitFrames / 4))
        checkpointer = WALCheckpointer(path: journalPath)
        walPath = journalPath + "-wal"
        sweep = ErasedBytesSweep(journalPath: journalPath, log: log)
        // One thread for the daemon's life (a queue's worker held by `run`), so that every checkpoint runs on the
        // same thread: what a thread's checkpoints have in common (strace's per-thread fault injection, `perf`)
        // stays together.
        DispatchQueue(label: "offertrack.checkpointer").async { [self] in run() }
    }

    /// The checkpoint thread: takes requests in order until `close`.
    private func run() {
        while true {
            if let at = nextForgetTry() {
                _ = wake.wait(timeout: .now() + .milliseconds(Int(max(0, at - Clock.monotonicMilliseconds()))))
            } else {
                wake.wait()
            }
            let pending = requests.withLock { pending in
                defer { pending.removeAll() }
                return pending
            }
            for request in pending {
                switch request {
                case .passive:
                    checkpoint(blocking: false)
                    state.withLock { $0.queued = false }
                case .blocking(let done):
                    checkpoint(blocking: true)
                    state.withLock { $0.blockingInFlight = false }
                    done.signal()
                case .forgetOldFrames(let done):
                    // A new erasure's frames are tried at once, not a second after an earlier erasure's last try.
                    if forgettingSince == nil { lastForgetTry = nil }
                    forgettingSince = forgettingSince ?? Clock.monotonicMilliseconds()
                    if let done {
                        // The writer pauses for this try: it may wait for readers.
                        if let since = forgettingSince { forgetOldFrames(waitingSince: since, waits: true) }
                        done.signal()
                    }
                case .close(let done):
                    checkpointer.close()
                    done.signal()
                    return
                }
            }
            if let since = forgettingSince, let at = nextForgetTry(), Clock.monotonicMilliseconds() >= at {
                forgetOldFrames(waitingSince: since, waits: !writerPausesForForgetting())
            }
        }
    }

    /// When the next try at an erasure's old frames is due (monotonic ms; checkpoint thread only), nil when none
    /// waits: a second after the last try, and never sooner than `forgetSpacingMilliseconds` after the last
    /// complete one.
    private func nextForgetTry() -> Int64? {
        guard forgettingSince != nil else { return nil }
        let notBefore = state.withLock { $0.forgetNotBefore }
        return max(lastForgetTry.map { $0 + 1_000 } ?? 0, notBefore)
    }

    /// Of a WAL of `walFrames` frames, those no checkpoint has copied yet (as far as this thread knows): bulk work
    /// (an erasure's rename) waits while they are many, so that the WAL never reaches the limit where commits wait.
    func uncopiedFrames(walFrames frames: Int) -> Int {
        state.withLock { frames < $0.checkpointedFrames ? frames : frames - $0.checkpointedFrames }
    }

    /// Asks for a passive checkpoint now, unless one is queued (bulk work waits for the WAL to be copied).
    func requestCopy() {
        let go = state.withLock { state -> Bool in
            guard !state.queued else { return false }
            state.queued = true
            return true
        }
        if go { enqueue(.passive) }
    }

    /// Asks for the WAL's frames older than the last commit to go (after an erasure committed, SPEC 11); until a
    /// try succeeds, the writer pauses after each commit for one. `erasedIDs`: the UTF-8 ids of people whose
    /// rename is done, whose copies in the journal's unused space go after it (`ErasedBytesSweep`).
    func requestForgettingOldFrames(erasedIDs: [[UInt8]] = []) {
        sweep.add(erasedIDs)
        let now = Clock.monotonicMilliseconds()
        state.withLock { $0.forgetRequestedAt = $0.forgetRequestedAt ?? now }
        enqueue(.forgetOldFrames(done: nil))
    }

    /// On the checkpoint thread: a `TRUNCATE` checkpoint, so that no frame written before an erasure stays in the
    /// WAL file; until a reader that needs them lets go, tried again each second (logged once past 60 s).
    ///
    /// A `TRUNCATE` holds the write lock while it waits for readers, so a try `waits` (at most
    /// `blockingTimeoutMilliseconds`) only when the writer pauses for it, or once the writer no longer pauses (a
    /// minute after the erasure; once a second then); any other try gives up at once when the writer or a reader is
    /// there. (Tried after every request and waiting each time, the tries held the write lock 110 ms of every 125
    /// while a seal counted its day: answers waited 0.5 s, bench/RESULTS.md.)
    private func forgetOldFrames(waitingSince since: Int64, waits: Bool) {
        lastForgetTry = Clock.monotonicMilliseconds()
        let wait = waits ? Self.blockingTimeoutMilliseconds : 0
        let done =
            (try? checkpointer.checkpoint(.truncate, busyTimeoutMilliseconds: wait)).map { $0.isComplete } ?? false
        if done {
            let notBefore = Clock.monotonicMilliseconds() + Self.forgetSpacingMilliseconds
            state.withLock {
                $0.checkpointedFrames = 0
                $0.forgetNotBefore = notBefore
            }
            health.withLock { $0.erasureTruncates += 1 }
            let next = sweep.afterTruncate(with: checkpointer) { [weak self] in self?.requestForgettingOldFrames() }
            forgettingLogged = false
            guard next != .tryAgain else {
                forgettingSince = Clock.monotonicMilliseconds()
                return
            }
            forgettingSince = nil
            state.withLock { $0.forgetRequestedAt = nil }
            return
        }
        if !forgettingLogged, Clock.monotonicMilliseconds() - since > 60_000 {
            forgettingLogged = true
            log.warning(
                "an erasure's old WAL frames have waited over 60 s for a reader holding an old "
                    + "snapshot (a long report, a backup); they go as soon as it ends")
        }
    }

    /// Whether the writer still pauses after its commits for a try at an erasure's old frames (`afterCommit`).
    private func writerPausesForForgetting() -> Bool {
        let now = Clock.monotonicMilliseconds()
        return state.withLock { $0.forgetRequestedAt.map { now - $0 < Self.forgetPauseMilliseconds } ?? false }
    }

    private func enqueue(_ request: Request) {
        requests.withLock { $0.append(request) }
        wake.signal()
    }

    /// On the writer thread, after a commit that left `walFrames` frames in the WAL: starts a passive checkpoint
    /// when enough frames are new, or past the limit waits (a bounded time, once per blocking checkpoint) for a
    /// blocking one.
    func afterCommit(walFrames frames: Int) {
        let pauses = state.withLock { state -> Bool in
            let now = Clock.monotonicMilliseconds()
            guard let since = state.forgetRequestedAt, now - since < Self.forgetPauseMilliseconds,
                now - state.lastForgetPause >= 1_000, now >= state.forgetNotBefore,
                !state.blockingInFlight
            else { return false }
            state.lastForgetPause = now
            return true
        }
        if pauses { pauseWriter { .forgetOldFrames(done: $0) } }
        let now = Clock.monotonicMilliseconds()
        enum Next { case nothing, passive, blocking }
        let next = state.withLock { state -> Next in
            if frames < state.checkpointedFrames { state.checkpointedFrames = 0 }  // the WAL started over
            if frames >= limitFrames, !state.blockingInFlight, now >= state.blockingRetryAt {
                state.blockingInFlight = true
                return .blocking
            }
            guard !state.queued, frames - state.checkpointedFrames >= newFramesForPassive(walFrames: frames) else {
                return .nothing
            }
            state.queued = true
            return .passive
        }
        switch next {
        case .nothing: return
        case .passive:
            enqueue(.passive)
        case .blocking:
            pauseWriter { .blocking(done: $0) }
        }
    }

    /// On the writer thread: queues `request` and waits at most `writerWaitMilliseconds` for it to end, counting
    /// the pause in `health`.
    private func pauseWriter(_ request: (DispatchSemaphore) -> Request) {
        let started = Clock.monotonicMicroseconds()
        let done = DispatchSemaphore(value: 0)
        enqueue(request(done))
        _ = done.wait(timeout: .now() + .milliseconds(Self.writerWaitMilliseconds))
        let waited = Clock.monotonicMicroseconds() &- started
        pauseDurations?.observe(waited)
        health.withLock {
            $0.writerPauses += 1
            $0.writerPauseMilliseconds += Int64(waited / 1000)
        }
    }

    /// How many frames newer than the last checkpoint start a passive one, in a WAL of `walFrames` frames.
    func newFramesForPassive(walFrames: Int) -> Int {
        walFrames >= floodPassiveFrames ? floodPassiveFrames : passiveFrames
    }

    /// Closes the checkpoint connection and ends the thread, after what is queued (before the writer closes the
    /// journal, which removes the WAL). Call it once.
    func close() {
        let done = DispatchSemaphore(value: 0)
        enqueue(.close(done: done))
        done.wait()
    }

    /// On the checkpoint thread: a passive checkpoint, followed when `blocking` by a `RESTART` (or `TRUNCATE`) one
    /// unless a reader keeps frames from being copied. Unless backing off after a failure.
    private func checkpoint(blocking: Bool) {
        guard Clock.monotonicMilliseconds() >= retryAt else { return }
        do {
            var result = try checkpointer.checkpoint(.passive, busyTimeoutMilliseconds: 0)
            if blocking {
                if result.isComplete {
                    let truncates = (CurrentProcess.fileSize(walPath) ?? 0) > 2 * Self.frameBytes * Int64(limitFrames)
                    result = try checkpointer.checkpoint(
                        truncates ? .truncate : .restart, busyTimeoutMilliseconds: Self.blockingTimeoutMilliseconds)
                }
                let finished = result.isComplete
                let retryAt = Clock.monotonicMilliseconds() + Self.blockingRetryMilliseconds
                state.withLock {
                    if !finished { $0.blockingRetryAt = retryAt }
                }
                if finished { health.withLock { $0.blocking += 1 } }
            } else if result.isComplete,
                (CurrentProcess.fileSize(walPath) ?? 0) > 2 * Self.frameBytes * Int64(limitFrames)
            {
                // A WAL a reader made long, now copied: give the disk space back, unless the writer or a reader is
                // there (a `TRUNCATE` waits for readers holding the write lock; the next passive tries again).
                result = try checkpointer.checkpoint(.truncate, busyTimeoutMilliseconds: 0)
            }
            let checkpointed = result.checkpointedFrames
            state.withLock { $0.checkpointedFrames = checkpointed }
            succeeded()
        } catch {
            failed(error)
        }
    }

    /// Ends the back-off, and says so when checkpoints had been failing.
    private func succeeded() {
        backoff = 0
        let recovered = health.withLock { health -> Int? in
            defer { health.failing = nil }
            return health.failing == nil ? nil : health.failures
        }
        if let recovered {
            log.notice("checkpoints succeed again (\(recovered) failed since start)")
        }
    }

    /// Counts, logs and shows a failure; the next try waits `backoff` from now.
    private func failed(_ error: any Error) {
        backoff = min(max(backoff * 2, 1000), Self.backoffLimitMilliseconds)
        retryAt = Clock.monotonicMilliseconds() + backoff
        let failures = health.withLock { health in
            health.failures += 1
            health.failing = "\(error)"
            return health.failures
        }
        log.error(
            "checkpoint failed (\(failures) since start; the WAL grows, records stay safe in it; "
                + "next try in \(backoff / 1000) s): \(error)")
    }
}
