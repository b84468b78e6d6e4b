import AttributionJoin
import OfferTrackDomain
import Posix
import Synchronization

/// How a recompute for new windows ended; `generation` tells a superseded one's (a second reload) from the last.
struct RecomputeOutcome: Sendable {
    let generation: Int
    let result: Result<Void, JournalFailure>
}

/// Recomputing the derived tables under new windows (`JournalWriter.beginRecompute`) on the writer thread, a
/// chunk of users at a time between batches, while records keep being journaled and acknowledged. Outcomes are
/// posted to the event loop through `wakeup`, like a batch's.
final class RecomputeChunks: @unchecked Sendable {
    // @unchecked: `chunkQueued` and `generation` are touched only on the writer thread; `outcomes` is guarded by
    // its Mutex.
    private let thread: JournalWriterThread
    private let wakeup: EventCounter
    private let outcomes = Mutex<[RecomputeOutcome]>([])
    /// Whether a chunk is queued on the writer thread.
    private var chunkQueued = false
    /// The generation of the recompute in progress.
    private var generation = 0

    /// Users recomputed so far by the recompute in progress, for `STATUS=`.
    let recomputedUsers = Atomic<Int>(0)

    /// How long one chunk may hold the write lock, in milliseconds: a batch arriving meanwhile waits for it.
    static let chunkMilliseconds: Int64 = 10

    init(thread: JournalWriterThread, wakeup: EventCounter) {
        self.thread = thread
        self.wakeup = wakeup
    }

    /// Recomputes under `settings`: a chunk now, then chunks between batches (`chunk`). A recompute already
    /// running starts over under `settings`; its outcome carries `generation`.
    func start(_ settings: AttributionSettings, generation: Int) {
        thread.async { [self] writer in
            self.generation = generation
            do {
                guard try writer.beginRecompute(settings) else { return post(.success(())) }
                recomputedUsers.store(0, ordering: .relaxed)
                chunk(writer)
            } catch {
                post(.failure(JournalFailure(error)))
            }
        }
    }

    /// Drops a recompute in progress (the daemon is stopping).
    func abandon() {
        thread.async { writer in writer.abandonRecompute() }
    }

    /// On the writer thread: one chunk of the recompute in progress, if any, and while no records wait one more
    /// chunk queued (never more than one, however many batches ran meanwhile).
    func chunk(_ writer: JournalWriter) {
        thread.preconditionOnWriterThread()
        guard writer.recomputedUsers != nil else { return }
        let deadline = Clock.monotonicMilliseconds() + Self.chunkMilliseconds
        do {
            let finished = try writer.continueRecompute { Clock.monotonicMilliseconds() >= deadline }
            recomputedUsers.store(writer.recomputedUsers ?? 0, ordering: .relaxed)
            if finished { return post(.success(())) }
        } catch {
            return post(.failure(JournalFailure(error)))
        }
        if !chunkQueued, !thread.recordsWait {
            chunkQueued = true
            thread.async { [self] writer in
                chunkQueued = false
                chunk(writer)
            }
        }
    }

    private func post(_ result: Result<Void, JournalFailure>) {
        let outcome = RecomputeOutcome(generation: generation, result: result)
        outcomes.withLock { $0.append(outcome) }
        wakeup.signal()
    }

    /// Takes the outcomes posted since the last call (after `CommitPipeline.takeResults`, which drains the wakeup).
    func takeOutcomes() -> [RecomputeOutcome] {
        outcomes.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }
}
