import AttributionJoin
import JournalStore
import Posix

/// Teaching the writer which users the journal holds (`JournalWriter.learnJournaledUsers`), a chunk at a time on
/// the writer thread, so that a restarted daemon soon stops probing the journal for every new user.
final class UserLearningChunks: @unchecked Sendable {
    // @unchecked: every property is touched only on the writer thread.
    private let thread: JournalWriterThread
    private let clock: @Sendable () -> Int64
    private let log: Logger
    /// When the current round of learning began.
    private var startedAt: Int64?
    /// Whether a chunk is queued on the writer thread.
    private var chunkQueued = false
    /// Index entries one chunk reads while records wait (otherwise `KnownUsers.defaultChunk`).
    static let chunkWhileRecordsWait = 1024

    init(thread: JournalWriterThread, clock: @escaping @Sendable () -> Int64, log: Logger) {
        self.thread = thread
        self.log = log
        self.clock = clock
    }

    /// Starts learning: chunk after chunk while no records wait, and one with the batches otherwise (`chunk`).
    func start() {
        thread.async { [self] writer in chunk(writer) }
    }

    /// On the writer thread: learns one chunk if the writer still needs to, and while no records wait keeps one
    /// more chunk queued (never more than one, however many batches ran meanwhile).
    func chunk(_ writer: JournalWriter) {
        thread.preconditionOnWriterThread()
        guard writer.needsToLearnUsers else { return }
        let startedAt = self.startedAt ?? clock()
        self.startedAt = startedAt
        do {
            let limit = thread.recordsWait ? Self.chunkWhileRecordsWait : KnownUsers.defaultChunk
            if try writer.learnJournaledUsers(limit: limit) {
                if !chunkQueued, !thread.recordsWait {
                    chunkQueued = true
                    thread.async { [self] writer in
                        chunkQueued = false
                        chunk(writer)
                    }
                }
                return
            }
        } catch {
            // A failed read is retried after a later batch; until then new users are probed as before.
            return
        }
        self.startedAt = nil
        let learned = writer.learnedUsers
        log.info(
            "the join knows every journaled user: \(learned.count) read in \(clock() - startedAt) ms, "
                + "filter \(learned.filterBytes / 1024) KiB")
    }
}
