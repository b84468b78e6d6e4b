import Posix
import Systemd

/// Sends `sd_notify` assignments and checks the result: a negative one is an errno, logged once (the daemon keeps
/// serving; a service manager that cannot be told is not a reason to stop).
final class ServiceNotifier {
    private let log: Logger
    private var failureLogged = false

    init(log: Logger) { self.log = log }

    /// Sends `state` (newline-separated `KEY=VALUE` assignments).
    func send(_ state: String) {
        guard case .failed(let code) = ServiceManager.notify(state), !failureLogged else { return }
        failureLogged = true
        log.warning(
            "cannot notify the service manager (logged once): \(PosixError("sd_notify", errno: code))")
    }
}
