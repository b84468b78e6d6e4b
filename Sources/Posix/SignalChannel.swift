import CLinux
import Glibc

/// Delivers SIGTERM, SIGINT and SIGHUP through a signalfd so the event loop handles them synchronously.
/// SIGPIPE is ignored (writes use `MSG_NOSIGNAL` anyway).
public final class SignalChannel {
    /// The signals the daemon acts on.
    public enum Signal: Sendable, Equatable {
        case terminate
        case interrupt
        case hangup
        case other(Int32)
    }

    /// The descriptor to watch for readability.
    public let fd: Int32

    public init() throws(PosixError) {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGHUP)
        // pthread functions return the error number instead of setting errno.
        let blocked = pthread_sigmask(SIG_BLOCK, &set, nil)
        guard blocked == 0 else { throw PosixError("pthread_sigmask", errno: blocked) }
        signal(SIGPIPE, SIG_IGN)
        fd = try valueOrErrno("signalfd") { signalfd(-1, &set, Int32(SFD_NONBLOCK) | Int32(SFD_CLOEXEC)) }
    }

    deinit { FileDescriptor.close(fd) }

    /// The signals received since the last call.
    public func receive() -> [Signal] {
        var received: [Signal] = []
        var info = signalfd_siginfo()
        while Glibc.read(fd, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
            switch Int32(info.ssi_signo) {
            case SIGTERM: received.append(.terminate)
            case SIGINT: received.append(.interrupt)
            case SIGHUP: received.append(.hangup)
            case let other: received.append(.other(other))
            }
        }
        return received
    }

    /// Waits up to `timeoutMilliseconds` for a signal to read; true when one is there.
    public func waitReadable(timeoutMilliseconds: Int32) -> Bool {
        var watch = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&watch, 1, timeoutMilliseconds) > 0
    }

    /// Sends SIGHUP to this process again (it waits, blocked, for the next `receive`).
    public static func resendHangup() {
        kill(getpid(), SIGHUP)
    }
}
