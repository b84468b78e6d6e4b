import CLinux
import Glibc

/// `AF_UNIX` stream sockets: listen, accept with peer credentials, connect.
public enum UnixSocket {
    /// Why a socket path cannot be bound.
    public enum BindError: Error, Sendable, CustomStringConvertible {
        /// Another process is accepting connections on the path.
        case inUse(path: String)
        /// The path exists and is not a socket.
        case notASocket(path: String)
        /// The path does not fit in `sockaddr_un`.
        case pathTooLong(path: String)
        case system(PosixError, path: String)

        public var description: String {
            switch self {
            case .inUse(let path): "\(path) is in use by a running process"
            case .notASocket(let path): "\(path) exists and is not a socket"
            case .pathTooLong(let path): "\(path) is longer than a Unix socket path may be (107 bytes)"
            case .system(let error, let path): "\(path): \(error)"
            }
        }
    }

    /// Binds and listens on `path`, created with `mode` (e.g. 0o660). A stale socket file (nobody listening)
    /// is replaced; a live one or a non-socket file is refused.
    public static func listen(path: String, mode: mode_t, backlog: Int32 = 4096) throws(BindError) -> Int32 {
        var info = stat()
        if lstat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFSOCK else { throw .notASocket(path: path) }
            if let probe = try? connect(path: path) {
                FileDescriptor.close(probe)
                throw .inUse(path: path)
            }
            unlink(path)
        }
        guard var address = address(path) else { throw .pathTooLong(path: path) }
        let fd: Int32
        do { fd = try newSocket() } catch { throw .system(error, path: path) }
        let previousMask = umask(~mode & 0o777)
        let bound = Result { () throws(PosixError) in try bind(fd, to: &address) }
        umask(previousMask)
        if case .failure(let error) = bound {
            FileDescriptor.close(fd)
            throw .system(error, path: path)
        }
        chmod(path, mode)
        do {
            _ = try valueOrErrno("listen") { Glibc.listen(fd, backlog) }
        } catch {
            FileDescriptor.close(fd)
            throw .system(error, path: path)
        }
        do { try FileDescriptor.setNonBlocking(fd) } catch { throw .system(error, path: path) }
        return fd
    }

    /// Accepts one connection (non-blocking, close-on-exec), or nil when none is waiting.
    public static func accept(_ listener: Int32) throws(PosixError) -> Int32? {
        while true {
            do {
                return try valueOrErrno("accept4") { offertrack_accept_nonblocking(listener) }
            } catch  where error.errno == ECONNABORTED {
                continue
            } catch  where error.isWouldBlock {
                return nil
            }
        }
    }

    /// The peer's pid, uid and gid.
    public static func peerCredentials(_ fd: Int32) throws(PosixError) -> PeerCredentials {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        _ = try valueOrErrno("getsockopt(SO_PEERCRED)") { offertrack_peer_credentials(fd, &pid, &uid, &gid) }
        // Without SO_PEERGROUPS (kernels before 4.13) only the primary gid counts.
        return PeerCredentials(pid: pid, uid: uid, gid: gid, groups: (try? peerGroups(fd)) ?? [])
    }

    /// The peer's supplementary groups (`SO_PEERGROUPS`, Linux 4.13+).
    public static func peerGroups(_ fd: Int32) throws(PosixError) -> [UInt32] {
        var capacity = 64
        while true {
            var groups = [gid_t](repeating: 0, count: capacity)
            let count = try valueOrErrno("getsockopt(SO_PEERGROUPS)") {
                offertrack_peer_groups(fd, &groups, Int32(capacity))
            }
            if Int(count) <= capacity { return Array(groups.prefix(Int(count))) }
            capacity = Int(count)
        }
    }

    /// Bytes sent on `fd` that the peer has not read yet (`SIOCOUTQ`, counted as the kernel accounts them); 0 when
    /// unknown.
    public static func unreadOutputBytes(_ fd: Int32) -> Int {
        max(0, Int(offertrack_unread_output(fd)))
    }

    /// Whether the bound socket `fd` has an abstract address (no file, so no file mode guards it).
    public static func isAbstract(_ fd: Int32) throws(PosixError) -> Bool {
        try valueOrErrno("getsockname") { offertrack_socket_is_abstract(fd) } == 1
    }

    /// Connects a blocking client socket to `path`.
    public static func connect(path: String) throws(PosixError) -> Int32 {
        guard var address = address(path) else { throw PosixError("connect", errno: ENAMETOOLONG) }
        let fd = try newSocket()
        do {
            _ = try withUnsafePointer(to: &address) { (pointer) throws(PosixError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (raw) throws(PosixError) in
                    try valueOrErrno("connect", retryOnInterrupt: false) {
                        Glibc.connect(fd, raw, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
            }
        } catch {
            FileDescriptor.close(fd)
            throw error
        }
        return fd
    }

    /// A datagram socket bound at `path` (what a service manager listens on for `sd_notify` messages).
    public static func bindDatagram(path: String) throws(PosixError) -> Int32 {
        guard var address = address(path) else { throw PosixError("bind", errno: ENAMETOOLONG) }
        let fd = try newSocket(type: Int32(SOCK_DGRAM.rawValue))
        do {
            try bind(fd, to: &address)
        } catch {
            FileDescriptor.close(fd)
            throw error
        }
        return fd
    }

    /// Removes the socket file a failed start bound (nobody will accept on it).
    public static func removeSocketFile(_ path: String) { unlink(path) }

    /// Copies up to `buffer.count` waiting bytes without consuming them (`MSG_PEEK`); a later read takes them.
    public static func peek(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(PosixError) -> IOResult {
        do {
            let n = try valueOrErrno("recv") { recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_PEEK)) }
            return .transferred(n)
        } catch  where error.isWouldBlock {
            return .wouldBlock
        }
    }

    /// Shuts down the sending direction, so the peer reads end of stream.
    public static func shutdownWrite(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// A close-on-exec `AF_UNIX` socket of `type` (stream unless told otherwise).
    private static func newSocket(type: Int32 = Int32(SOCK_STREAM.rawValue)) throws(PosixError) -> Int32 {
        try valueOrErrno("socket") { socket(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0) }
    }

    /// Binds `fd` to `address` (not retried on EINTR).
    private static func bind(_ fd: Int32, to address: inout sockaddr_un) throws(PosixError) {
        _ = try withUnsafePointer(to: &address) { (pointer) throws(PosixError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (raw) throws(PosixError) in
                try valueOrErrno("bind", retryOnInterrupt: false) {
                    Glibc.bind(fd, raw, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
    }

    /// The one `sockaddr_un` builder: `path` NUL-terminated in `sun_path`; nil when it is empty or does not fit.
    private static func address(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }
}

extension UnixSocket {
    /// Makes blocking reads on `fd` fail with EAGAIN after `seconds` without data.
    public static func setReceiveTimeout(_ fd: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
}

extension UnixSocket {
    /// Makes blocking writes on `fd` fail with EAGAIN after `seconds` without progress.
    public static func setSendTimeout(_ fd: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
}
