import CLinux
import Glibc

/// TCP sockets on numeric addresses (`127.0.0.1`, `::1`, `0.0.0.0`), for the metrics endpoint and its clients.
public enum TCPSocket {
    /// Binds and listens on `host:port` (IPv4 dotted or IPv6 without brackets), with `SO_REUSEADDR`.
    public static func listen(host: String, port: UInt16, backlog: Int32 = 64) throws(PosixError) -> Int32 {
        try open(host: host, port: port) { fd, address, length in
            // SO_REUSEADDR lets a restarted server bind its port while old connections linger; for port 0 it
            // could hand out a port another such socket holds, so the kernel's choice goes without it.
            var one: Int32 = 1
            if port != 0 { _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) }
            guard bind(fd, address, length) == 0 else { return "bind" }
            return Glibc.listen(fd, backlog) == 0 ? nil : "listen"
        }
    }

    /// A blocking socket connected to `host:port`.
    public static func connect(host: String, port: UInt16) throws(PosixError) -> Int32 {
        try open(host: host, port: port) { fd, address, length in
            Glibc.connect(fd, address, length) == 0 ? nil : "connect"
        }
    }

    /// A new socket for `host:port`, set up by `body` (which names the call that failed, or returns nil).
    private static func open(
        host: String, port: UInt16, _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> String?
    ) throws(PosixError) -> Int32 {
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        let family: Int32
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            family = AF_INET
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
        } else if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            family = AF_INET6
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
        } else {
            throw PosixError("inet_pton(\(host))", errno: EINVAL)
        }
        let fd = try valueOrErrno("socket") {
            socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        let failed =
            family == AF_INET
            ? withUnsafePointer(to: &v4) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            : withUnsafePointer(to: &v6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        if let failed {
            let error = PosixError.last(failed)
            FileDescriptor.close(fd)
            throw error
        }
        return fd
    }

    /// The local port `fd` is bound to (after binding port 0, the one the kernel chose).
    public static func port(of fd: Int32) throws(PosixError) -> UInt16 {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard rc == 0 else { throw PosixError.last("getsockname") }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
    }

    /// Waits up to `timeoutMilliseconds` for a connection on `listener` (blocking or not) and accepts it as a
    /// blocking socket; nil when none came.
    public static func accept(_ listener: Int32, timeoutMilliseconds: Int32) throws(PosixError) -> Int32? {
        var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        let ready = try valueOrErrno("poll") { poll(&poller, 1, timeoutMilliseconds) }
        guard ready > 0 else { return nil }
        guard let fd = try UnixSocket.accept(listener) else { return nil }
        // Accepted non-blocking; the metrics server reads and writes it with timeouts instead.
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
        return fd
    }
}
