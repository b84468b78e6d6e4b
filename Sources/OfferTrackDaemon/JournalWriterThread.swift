import AttributionJoin
import Dispatch
import Synchronization

/// The journal's one writer and the thread everything it does runs on, one piece of work at a time and in order:
/// batches, stream commits, and the chunks of learning users and recomputing between them.
final class JournalWriterThread: @unchecked Sendable {
    // @unchecked: `writer` is touched only on `queue`.
    private let writer: JournalWriter
    private let queue = DispatchQueue(label: "offertrack.journal-writer")
    /// Records read and waiting for the writer (`CommitQueue` keeps it current).
    private let backlog: Backlog
    /// Batches handed to this thread and not begun yet (`asyncBatch`).
    private let batchesQueued = Atomic<Int>(0)

    init(writer: JournalWriter, backlog: Backlog) {
        self.writer = writer
        self.backlog = backlog
    }

    /// Whether records wait for the writer (read anywhere; the event loop writes it).
    var recordsWait: Bool { backlog.value.load(ordering: .relaxed) > 0 }

    /// Runs `body` on the writer thread after what is queued there.
    func async(_ body: @escaping @Sendable (JournalWriter) -> Void) {
        queue.async { [self] in body(writer) }
    }

    /// Runs a batch's commit on the writer thread after what is queued there; `batchWaits` until it begins.
    func asyncBatch(_ body: @escaping @Sendable (JournalWriter) -> Void) {
        batchesQueued.add(1, ordering: .relaxed)
        queue.async { [self] in
            batchesQueued.subtract(1, ordering: .relaxed)
            body(writer)
        }
    }

    /// Whether a batch is queued on this thread behind what runs now (a chunk queued earlier lets it go first).
    var batchWaits: Bool { batchesQueued.load(ordering: .relaxed) > 0 }

    /// Runs `body` on the writer thread `milliseconds` from now (after what is queued there then).
    func async(afterMilliseconds milliseconds: Int, _ body: @escaping @Sendable (JournalWriter) -> Void) {
        queue.asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [self] in body(writer) }
    }

    /// Stops the daemon when called anywhere but on the writer thread: the entry points of the types whose state
    /// only the writer thread touches (their `@unchecked Sendable` rests on it) check it first.
    func preconditionOnWriterThread() {
        dispatchPrecondition(condition: .onQueue(queue))
    }

    /// Runs `body` on the writer thread and waits for it.
    func sync<T>(_ body: (JournalWriter) throws -> T) rethrows -> T {
        try queue.sync { try body(writer) }
    }
}
