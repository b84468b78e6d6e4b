import Dispatch
import Journal
import Synchronization

/// The journal's one writer and the thread everything it does runs on, one piece of work at a time and in order:
/// batches, stream commits, and the chunks of learning users and recomputing between them.
final class JournalWriterThread: @unchecked Sendable {
    // @unchecked: `writer` is touched only on `queue`.
    private let writer: JournalWriter
    private let queue = DispatchQueue(label: "offertrack.journal-writer")
    /// Records read and waiting for the writer (`CommitQueue` keeps it current).
    private let backlog: Backlog

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

    /// Runs `body` on the writer thread and waits for it.
    func sync<T>(_ body: (JournalWriter) throws -> T) rethrows -> T {
        try queue.sync { try body(writer) }
    }
}
