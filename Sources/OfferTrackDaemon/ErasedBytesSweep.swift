import Dispatch
import JournalStore
import Posix
import Synchronization

/// After an erasure's rename and its `TRUNCATE` (SPEC 11: within 60 s the person's id is in no file): the copies
/// of the id SQLite left in the unused space of pages it rebuilt (`UnusedSpaceScrub`). A search of the journal's
/// file, on a queue and a read-only connection of its own (it takes seconds on a large journal and holds no lock),
/// finds the pages; the next forgetting try of the checkpoint thread, right after a complete `TRUNCATE` while the
/// writer pauses for it, zeroes them; then the file is searched again, until a search finds nothing (at most
/// `maximumRounds` scrubs, then a warning). The ids are held in memory only until then. A search looks for every id
/// waiting in one pass (`NeedleSet`); ids that come while it runs wait for the next (`ErasedIDsQueue`), which begins
/// no sooner than the last one took.
final class ErasedBytesSweep: @unchecked Sendable {
    // @unchecked: every stored property is a constant, guarded by `state`, or touched only on `queue` (`paced`).
    private let journalPath: String
    private let log: Logger
    /// Background work (libdispatch runs it at nice 10 here, unprivileged too): beside the writer, a search of the
    /// whole file takes a core's spare time, not the writer's.
    private let queue = DispatchQueue(label: "offertrack.erased-bytes", qos: .background)
    static let maximumRounds = 5

    private typealias State = ErasedIDsQueue
    private let state = Mutex(State())
    /// When the last search ended and how long it took (monotonic ms; on `queue` only): the next waits as long
    /// before it begins, so that erasures coming all the time keep a search of the whole file running at most half
    /// the time (a core, in the bench's traffic of 16 erasures a second, before).
    private var paced: (ended: Int64, took: Int64)?

    init(journalPath: String, log: Logger) {
        self.journalPath = journalPath
        self.log = log
    }

    /// Whether ids wait to be swept.
    var isPending: Bool { state.withLock { !$0.needles.isEmpty } }

    /// Adds the ids of people whose rename is done.
    func add(_ needles: [[UInt8]]) {
        state.withLock { $0.add(needles) }
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
    /// next search. `searched` is called on the search's queue when a search found pages, or ids came while it ran,
    /// so that the checkpoint thread is asked for another try.
    func afterTruncate(with checkpointer: WALCheckpointer, searched: @escaping @Sendable () -> Void) -> Next {
        let next = state.withLock { state -> ErasedIDsQueue.Phase? in
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
        if let paced {
            let wait = paced.ended + paced.took - Clock.monotonicMilliseconds()
            if wait > 0 { Sleep.milliseconds(Int(wait)) }
        }
        let started = Clock.monotonicMilliseconds()
        defer {
            let ended = Clock.monotonicMilliseconds()
            paced = (ended, ended - started)
        }
        let needles = state.withLock { $0.beginSearch() }
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
        let report = state.withLock { $0.searchEnded(found: pages, maximumRounds: Self.maximumRounds) }
        if let report, report.done {
            log.info("the erased ids' sweep is done: no page's unused space holds them (\(report.pages) pages zeroed)")
        } else if let report {
            log.warning(
                "after \(report.rounds) rounds, \(report.pages) pages of the journal still hold an erased id in their "
                    + "unused space (VACUUM with the daemon stopped rewrites the file without them)")
        }
        // Pages to zero, or ids that came while it ran: the checkpoint thread's next try goes on.
        if report == nil || isPending { searched() }
    }
}
