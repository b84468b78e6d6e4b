import JournalStore
import Posix
import Synchronization

/// One commit of records from the stream (a central daemon): how many, and how it went.
struct StreamCommit: Sendable {
    let records: Int
    let outcomes: Result<[AppendOutcome], JournalFailure>
}

/// Commits of records consumed from the stream (a central daemon), on the writer thread between socket batches,
/// with the same steps after them (`CommitSteps`); their outcomes go to the event loop like a batch's (the
/// corruption gate, `STATUS=`, metrics). Once the journal is found corrupt nothing more is committed from the stream.
final class StreamCommits: Sendable {
    private let thread: JournalWriterThread
    private let steps: CommitSteps
    private let wakeup: EventCounter
    private let commits = Mutex<[StreamCommit]>([])
    /// Set by the event loop once the journal is found corrupt: stream commits are refused from then on.
    let refusing = Mutex<JournalFailure?>(nil)
    /// When the stream commit on the writer began (monotonic ms), 0 when none: the watchdog's honesty.
    let startedAt = Atomic<Int64>(0)

    init(thread: JournalWriterThread, steps: CommitSteps, wakeup: EventCounter) {
        self.thread = thread
        self.steps = steps
        self.wakeup = wakeup
    }

    /// Commits `submissions` on the writer thread and waits for the outcome.
    func commit(_ submissions: [Submission]) throws -> [AppendOutcome] {
        try thread.sync { writer in
            if let corrupt = refusing.withLock({ $0 }) { throw corrupt }
            startedAt.store(Clock.monotonicMilliseconds(), ordering: .relaxed)
            defer { startedAt.store(0, ordering: .relaxed) }
            let result = steps.append(submissions, on: writer)
            commits.withLock { $0.append(StreamCommit(records: submissions.count, outcomes: result)) }
            wakeup.signal()
            let outcomes = try result.get()
            steps.afterCommit(writer)
            return outcomes
        }
    }

    /// Stream commits since the last call, for the event loop.
    func take() -> [StreamCommit] {
        commits.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }
}
