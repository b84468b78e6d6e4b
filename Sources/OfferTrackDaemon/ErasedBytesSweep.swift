import Dispatch
import JournalStore
import Posix
import Synchronization

/// After an erasure's rename and its `TRUNCATE` (SPEC 11: within 60 s the person's id is in no file): the copies
/// of the id SQLite left in the unused space of pages it rebuilt (`UnusedSpaceScrub`). A search of the journal's
/// file, on a queue and a read-only connection of its own (it takes seconds on a large journal and holds no lock),
/// finds the pages; the next forgetting try of the checkpoint thread, right after a complete `TRUNCATE` while the
/// writer pauses for it, zeroes them; then the file is searched again, until a search finds nothing (at most
/// `maximumRounds` scrubs, then a warning). The ids are held in memory only until then.
final class ErasedBytesSweep: @unchecked Sendable {
    // @unchecked: every stored property is a constant or guarded by `state`.
    private let journalPath: String
    private let log: Logger
    private let queue = DispatchQueue(label: "offertrack.erased-bytes")
    static let maximumRounds = 5

    private enum Phase {
        /// Nothing to do, or a search is to start after the next complete `TRUNCATE`.
        case idle
        case searching
        /// Pages found by the last search, to zero after the next complete `TRUNCATE`.
        case found([Int64])
    }
    private struct State {
        var needles: [[UInt8]] = []
        /// Whether ids came after the running search began (it may have missed theirs).
        var addedWhileSearching = false
        var phase = Phase.idle
        var rounds = 0
        var pagesScrubbed = 0
    }
    private let state = Mutex(State())

    init(journalPath: String, log: Logger) {
        self.journalPath = journalPath
        self.log = log
    }

    /// Whether ids wait to be swept.
    var isPending: Bool { state.withLock { !$0.needles.isEmpty } }

    /// Adds the ids of people whose rename is done.
    func add(_ needles: [[UInt8]]) {
        state.withLock { state in
            state.needles.append(contentsOf: needles.filter { !$0.isEmpty })
            if case .searching = state.phase { state.addedWhileSearching = true }
        }
    }

    /// What the checkpoint thread does after a sweep's step.
    enum Next: Equatable {
        /// Nothing waits.
        case done
        /// Another `TRUNCATE` and step, in a second (the WAL held frames, or zeroing failed).
        case tryAgain
        /// Nothing until the search running now calls back.
        case awaitSearch
    }

    /// On the checkpoint thread, right after a complete `TRUNCATE` (the WAL empty, the writer paused for it):
    /// zeroes the pages the last search found, through `checkpointer` (the checkpoint thread's), and starts the
    /// next search. `searched` is called on the search's queue when a search found pages, so that the checkpoint
    /// thread is asked for another try.
    func afterTruncate(with checkpointer: WALCheckpointer, searched: @escaping @Sendable () -> Void) -> Next {
        let next = state.withLock { state -> Phase? in
            guard !state.needles.isEmpty else { return nil }
            if case .searching = state.phase { return nil }
            defer { state.phase = .searching }
            return state.phase
        }
        guard let next else { return isPending ? .awaitSearch : .done }
        if case .found(let pages) = next {
            do {
                switch try checkpointer.scrubUnusedSpace(of: pages) {
                case .scrubbed(let count):
                    state.withLock {
                        $0.rounds += 1
                        $0.pagesScrubbed += count
                    }
                case .notNow:
                    state.withLock { $0.phase = .found(pages) }
                    return .tryAgain
                }
            } catch {
                log.error("cannot zero an erased id's copies in the journal's unused space (tried again): \(error)")
                state.withLock { $0.phase = .found(pages) }
                return .tryAgain
            }
        }
        queue.async { [self] in search(then: searched) }
        return .awaitSearch
    }

    /// On the search's queue: the pages whose unused space holds one of the ids.
    private func search(then searched: @escaping @Sendable () -> Void) {
        let needles = state.withLock { state -> [[UInt8]] in
            state.addedWhileSearching = false
            return state.needles
        }
        let pages: [Int64]
        do {
            pages = try UnusedSpaceScrub.pagesHolding(needles, inJournalAt: journalPath)
        } catch let unsupported as UnusedSpaceScrub.Unsupported {
            state.withLock { $0 = State() }
            log.warning(
                "cannot search for an erased id's copies in the journal's unused space: \(unsupported) (VACUUM with "
                    + "the daemon stopped rewrites the file without them)")
            return
        } catch {
            let givesUp = state.withLock { state -> Bool in
                state.rounds += 1
                guard state.rounds > Self.maximumRounds else {
                    state.phase = .idle
                    return false
                }
                state = State()
                return true
            }
            log.error(
                "cannot search the journal for an erased id's copies (\(givesUp ? "given up" : "tried again")): \(error)"
            )
            if !givesUp { searched() }
            return
        }
        let report = state.withLock { state -> (rounds: Int, pages: Int, done: Bool)? in
            if pages.isEmpty, !state.addedWhileSearching {
                defer { state = State() }
                return (state.rounds, state.pagesScrubbed, true)
            }
            if state.rounds >= Self.maximumRounds {
                defer { state = State() }
                return (state.rounds, pages.count, false)
            }
            state.phase = pages.isEmpty ? .idle : .found(pages)
            return nil
        }
        switch report {
        case .some((_, let count, true)):
            log.info("the erased ids' sweep is done: no page's unused space holds them (\(count) pages zeroed)")
        case .some((let rounds, let count, _)):
            log.warning(
                "after \(rounds) rounds, \(count) pages of the journal still hold an erased id in their unused "
                    + "space (VACUUM with the daemon stopped rewrites the file without them)")
        case .none:
            searched()
        }
    }
}
