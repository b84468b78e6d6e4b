import Glibc
import Posix
import TestSupport

/// Section 4: many connected clients that send nothing.
enum IdleConnections {
    /// Raises this process's open-file limit to its hard limit (the daemon inherits it); returns the soft limit.
    @discardableResult
    static func raiseDescriptorLimit() -> UInt {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return UInt(limit.rlim_cur)
    }

    /// Opens `count` connections to `daemon`, waits until its `STATUS=` says it serves them all, and returns its
    /// memory then.
    static func memory(with count: Int, daemon: DaemonProcess) throws -> ProcessMemory {
        var descriptors: [Int32] = []
        defer { for fd in descriptors { FileDescriptor.close(fd) } }
        for _ in 0..<count {
            descriptors.append(try UnixSocket.connect(path: daemon.socketPath))
        }
        try daemon.waitForStatus(timeoutSeconds: 30) { $0.hasPrefix("serving: \(count) connections;") }
        Stopwatch.sleep(seconds: 0.2)
        return try daemon.memory()
    }
}
