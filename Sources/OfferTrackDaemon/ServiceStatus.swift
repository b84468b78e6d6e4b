import Posix

/// What the service manager is told, and where the daemon is in its life: `sd_notify` (`ServiceNotifier`), the
/// watchdog's pings, the last `STATUS=` sent; serving, or stopping with a deadline for the drain; and why the daemon
/// must stop and exit non-zero. `Daemon+Housekeeping` and `Daemon+Lifecycle` act on it.
final class ServiceStatus {
    private let notifier: ServiceNotifier
    /// Half of it between watchdog pings; nil when the service manager asks for none.
    let watchdogIntervalMilliseconds: Int64?
    var lastWatchdogPing: Int64 = 0
    /// The last `STATUS=` sent, and when it was last compared with the current one (once a second).
    var lastStatus = ""
    var lastStatusAt: Int64 = 0
    /// The drain began (SIGTERM, SIGINT or a fatal failure): nothing more is accepted or read.
    var stopping = false
    /// When the drain stops waiting for queued records (monotonic ms).
    var drainDeadline: Int64 = 0
    /// Why the daemon must stop and exit non-zero (the listener could not be watched).
    var fatalFailure: String?

    init(log: Logger, watchdogIntervalMilliseconds: Int64?) {
        notifier = ServiceNotifier(log: log)
        self.watchdogIntervalMilliseconds = watchdogIntervalMilliseconds
    }

    /// Sends `state` (newline-separated `KEY=VALUE` assignments).
    func send(_ state: String) { notifier.send(state) }

    /// Sends `READY=1` with `status`, which becomes the last `STATUS=` sent.
    func ready(_ status: String) {
        notifier.send("READY=1\nSTATUS=\(status)")
        lastStatus = status
    }
}
