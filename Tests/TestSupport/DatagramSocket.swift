import Glibc
import Posix

/// A bound `AF_UNIX` datagram socket: what a service manager listens on for `sd_notify` messages.
public final class DatagramSocket {
    public let fd: Int32
    public let path: String
    private var closed = false

    /// Binds a datagram socket at `path`.
    public init(path: String) throws(PosixError) {
        self.path = path
        fd = try UnixSocket.bindDatagram(path: path)
    }

    deinit { close() }

    /// Closes the socket and removes its path (once).
    public func close() {
        guard !closed else { return }
        closed = true
        FileDescriptor.close(fd)
        unlink(path)
    }

    /// The next datagram, or nil when none arrives within `timeoutMilliseconds`.
    public func receive(timeoutMilliseconds: Int32) -> [UInt8]? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, timeoutMilliseconds) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        guard count >= 0 else { return nil }
        return Array(buffer[0..<count])
    }
}

/// Sending signals to other processes.
public enum Signals {
    public static let kill: Int32 = SIGKILL
    public static let terminate: Int32 = SIGTERM
    public static let hangup: Int32 = SIGHUP
    public static let stop: Int32 = SIGSTOP
    public static let resume: Int32 = SIGCONT

    /// Sends `signal` to `pid`; false when it failed.
    @discardableResult
    public static func send(_ signal: Int32, to pid: Int32) -> Bool { Glibc.kill(pid, signal) == 0 }
}

extension FileSystem {
    /// Writes every file system's dirty pages to disk (`sync(2)`), for measurements that need a quiet disk.
    public static func syncAll() {
        sync()
    }
}
