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
        var lastLoggedProblem: String?
        var lastLogAt: Int64 = -StreamHealth.logIntervalMilliseconds
        var suppressed = 0
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

    /// One failed operation; `immediate` shows it at once (it will not pass by retrying).
    public func failed(_ problem: String, immediate: Bool = false) {
        let line: String? = inner.withLock { inner in
            inner.state.failuresInRow += 1
            guard immediate || inner.state.failuresInRow >= Self.failuresBeforeDown else { return nil }
            inner.state.problem = problem
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

    /// One operation succeeded: a problem shown ends.
    public func succeeded() {
        let ended: String? = inner.withLock { inner in
            inner.state.failuresInRow = 0
            guard let problem = inner.state.problem else { return nil }
            inner.state.problem = nil
            inner.lastLoggedProblem = nil
            inner.suppressed = 0
            return problem
        }
        if let ended { log.notice("stream up again, \(what) (after: \(ended))") }
    }
}
