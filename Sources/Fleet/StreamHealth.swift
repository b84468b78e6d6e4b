import Posix
import Synchronization

/// Whether a daemon's side of the stream works (SPEC section 10, issue "no silent stall"): the forwarder or the
/// consumer reports each failure and each success; the daemon shows the problem in `STATUS=`, the metric
/// `offertrack_stream_up` and (through the journal) `offertrack status`, and the log gets one line when a
/// problem starts or changes, one a minute while it lasts, and one when it ends.
public final class StreamHealth: Sendable {
    /// The state as the daemon shows it.
    public struct State: Sendable, Equatable {
        /// Why the stream cannot be used now, with what fixes it; nil while it works.
        public var problem: String?
        /// Failures in a row (creating, binding, fetching, publishing) since the last success.
        public var failuresInRow: Int
    }

    /// A problem is shown once this many operations in a row failed (or at once for a refusal that is no
    /// transient: placement, misconfiguration).
    static let failuresBeforeDown = 3
    static let logIntervalMilliseconds: Int64 = 60_000

    private struct Inner {
        var state = State(problem: nil, failuresInRow: 0)
        /// Failures in a row, and the problem shown, of each part that reports on its own ("" for the whole).
        var failures: [String: Int] = [:]
        var problems: [String: String] = [:]
        var lastLoggedProblem: String?
        var lastLogAt: Int64 = -StreamHealth.logIntervalMilliseconds
        var suppressed = 0

        /// The state from every part's: the problems shown, in the parts' order, and the longest run of failures.
        mutating func update() {
            let shown = problems.sorted { $0.key < $1.key }.map(\.value)
            state = State(
                problem: shown.isEmpty ? nil : shown.joined(separator: "; "), failuresInRow: failures.values.max() ?? 0)
        }
    }

    private let inner = Mutex(Inner())
    private let log: Logger
    private let what: String

    /// `what` names the side ("forwarding to the stream OFFERTRACK"); `log` writes one line.
    public init(what: String, log: Logger) {
        self.what = what
        self.log = log
    }

    public var state: State { inner.withLock { $0.state } }

    /// 1 while the stream works, 0 while a problem is shown.
    public var isUp: Bool { state.problem == nil }

    /// One failed operation; `immediate` shows it at once (it will not pass by retrying). `part` names what
    /// failed when parts fail on their own (a partition's fetches): another part's success does not hide it.
    public func failed(_ problem: String, immediate: Bool = false, part: String = "") {
        let line: String? = inner.withLock { inner in
            inner.failures[part, default: 0] += 1
            defer { inner.update() }
            guard immediate || inner.failures[part, default: 0] >= Self.failuresBeforeDown else { return nil }
            inner.problems[part] = problem
            inner.update()
            let now = Clock.monotonicMilliseconds()
            if problem != inner.lastLoggedProblem || now - inner.lastLogAt >= Self.logIntervalMilliseconds {
                let repeats = inner.suppressed
                inner.lastLoggedProblem = problem
                inner.lastLogAt = now
                inner.suppressed = 0
                return "STREAM DOWN, \(what): \(problem)"
                    + (repeats > 0 ? " (\(repeats) more failures since the last line)" : "")
            }
            inner.suppressed += 1
            return nil
        }
        if let line { log.warning(line) }
    }

    /// One operation of `part` succeeded: its problem, if shown, ends; the stream is up again once no part has
    /// one. A success of the whole ("") also ends the whole's problem only.
    public func succeeded(part: String = "") {
        let ended: String? = inner.withLock { inner in
            inner.failures[part] = nil
            guard let problem = inner.problems.removeValue(forKey: part) else {
                inner.update()
                return nil
            }
            inner.update()
            guard inner.problems.isEmpty else { return nil }
            inner.lastLoggedProblem = nil
            inner.suppressed = 0
            return problem
        }
        if let ended { log.notice("stream up again, \(what) (after: \(ended))") }
    }
}
