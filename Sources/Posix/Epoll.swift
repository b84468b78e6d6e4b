import CLinux
import Glibc

/// An epoll instance (level-triggered) for the daemon's event loop.
public final class Epoll {
    /// Readiness a descriptor is watched for, or reported with.
    public struct Events: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let readable = Events(rawValue: EPOLLIN.rawValue)
        public static let writable = Events(rawValue: EPOLLOUT.rawValue)
        public static let hangup = Events(rawValue: EPOLLHUP.rawValue | EPOLLRDHUP.rawValue)
        public static let error = Events(rawValue: EPOLLERR.rawValue)
    }

    private let fd: Int32
    private var buffer: [epoll_event]

    public init(capacity: Int = 256) throws(PosixError) {
        fd = try valueOrErrno("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        buffer = Array(repeating: epoll_event(), count: capacity)
    }

    deinit { FileDescriptor.close(fd) }

    /// Starts watching `descriptor` for `events`; `token` comes back with each readiness.
    public func add(_ descriptor: Int32, events: Events, token: UInt64) throws(PosixError) {
        try control(EPOLL_CTL_ADD, descriptor, events, token)
    }

    /// Changes what `descriptor` is watched for.
    public func modify(_ descriptor: Int32, events: Events, token: UInt64) throws(PosixError) {
        try control(EPOLL_CTL_MOD, descriptor, events, token)
    }

    /// Stops watching `descriptor`.
    public func remove(_ descriptor: Int32) {
        var event = epoll_event()
        _ = epoll_ctl(fd, EPOLL_CTL_DEL, descriptor, &event)
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) and returns the ready (token, events) pairs.
    public func wait(timeoutMilliseconds: Int32) throws(PosixError) -> [(token: UInt64, events: Events)] {
        let count: Int32
        do {
            // Not retried: an interrupted wait returns no events and the caller's loop decides what comes next.
            count = try valueOrErrno("epoll_wait", retryOnInterrupt: false) {
                buffer.withUnsafeMutableBufferPointer { events in
                    epoll_wait(fd, events.baseAddress, Int32(events.count), timeoutMilliseconds)
                }
            }
        } catch  where error.errno == EINTR {
            return []
        }
        return (0..<Int(count)).map { (buffer[$0].data.u64, Events(rawValue: buffer[$0].events)) }
    }

    private func control(_ operation: Int32, _ descriptor: Int32, _ events: Events, _ token: UInt64)
        throws(PosixError)
    {
        var event = epoll_event()
        event.events = events.rawValue
        event.data.u64 = token
        _ = try valueOrErrno("epoll_ctl") { epoll_ctl(fd, operation, descriptor, &event) }
    }
}
