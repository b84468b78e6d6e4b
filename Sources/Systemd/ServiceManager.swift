import CSystemd

/// The daemon's side of the systemd service-manager protocol (sd-daemon), wrapped once.
public enum ServiceManager {
    /// The result of sending a notification.
    public enum NotifyResult: Sendable, Equatable {
        /// Delivered to the service manager.
        case sent
        /// Not running under a service manager (`NOTIFY_SOCKET` unset).
        case notSupervised
        /// Sending failed with this errno.
        case failed(errno: Int32)
    }

    /// Sends a newline-separated list of `KEY=VALUE` assignments (`READY=1`, `STATUS=…`).
    @discardableResult
    public static func notify(_ state: String) -> NotifyResult {
        let rc = sd_notify(0, state)
        if rc > 0 { return .sent }
        if rc == 0 { return .notSupervised }
        return .failed(errno: -rc)
    }

    /// The listening sockets passed by socket activation (`LISTEN_FDS`/`LISTEN_PID`), starting at fd 3.
    /// The environment variables are removed so children do not inherit them.
    public static func listenDescriptors() -> [Int32] {
        let count = sd_listen_fds(1)
        guard count > 0 else { return [] }
        return (0..<count).map { SD_LISTEN_FDS_START + $0 }
    }

    /// Whether `fd` is a listening Unix stream socket.
    public static func isListeningUnixStreamSocket(_ fd: Int32) -> Bool {
        sd_is_socket_unix(fd, 1 /* SOCK_STREAM */, 1, nil, 0) > 0
    }

    /// The watchdog interval in microseconds when the service manager expects `WATCHDOG=1` pings, else nil.
    public static func watchdogIntervalMicroseconds() -> UInt64? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return usec
    }
}
