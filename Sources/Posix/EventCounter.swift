import CLinux
import Glibc

/// An eventfd: one thread signals, the event loop's epoll wakes.
public final class EventCounter: @unchecked Sendable {
    /// The descriptor to watch for readability.
    public let fd: Int32

    public init() throws(PosixError) {
        fd = try valueOrErrno("eventfd") { eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC)) }
    }

    deinit { FileDescriptor.close(fd) }

    /// Wakes the watcher (safe from any thread).
    public func signal() {
        var one: UInt64 = 1
        _ = Glibc.write(fd, &one, 8)
    }

    /// Consumes pending signals.
    public func drain() {
        var value: UInt64 = 0
        _ = Glibc.read(fd, &value, 8)
    }
}
