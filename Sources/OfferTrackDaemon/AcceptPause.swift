/// What a listener does after `accept` fails (typically `EMFILE`: out of descriptors): the listening socket stays
/// readable, so retrying at once would spin. The event loop's listener and the metrics endpoint both stop
/// accepting for `milliseconds` and log at most one failure every `logIntervalMilliseconds`.
struct AcceptPause: Sendable {
    /// How long accepting pauses after a failure (the event loop resumes sooner when a connection closes).
    static let milliseconds: Int64 = 100
    /// At most one accept-failure log line this often.
    static let logIntervalMilliseconds: Int64 = 10_000

    private var lastLog: Int64?

    /// A failure at `now`: calls `log` unless a failure was logged within `logIntervalMilliseconds`; returns
    /// when accepting resumes.
    mutating func failed(now: Int64, log: () -> Void) -> Int64 {
        if lastLog.map({ now - $0 >= Self.logIntervalMilliseconds }) ?? true {
            lastLog = now
            log()
        }
        return now + Self.milliseconds
    }
}
