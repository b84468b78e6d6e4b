import Glibc
import Posix

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

    /// Opens `count` connections to `daemon`, waits until it holds them all, and returns its memory then.
    static func memory(with count: Int, daemon: DaemonProcess) throws -> ProcessMemory {
        let before = daemon.openDescriptorCount()
        var descriptors: [Int32] = []
        defer { for fd in descriptors { FileDescriptor.close(fd) } }
        for _ in 0..<count {
            descriptors.append(try UnixSocket.connect(path: daemon.socketPath))
        }
        let deadline = Stopwatch.now() + 30_000_000_000
        while daemon.openDescriptorCount() < before + count {
            guard Stopwatch.now() < deadline else {
                throw BenchFailure(
                    "offertrackd holds \(daemon.openDescriptorCount() - before) of \(count) idle connections after 30 s"
                )
            }
            Stopwatch.sleep(seconds: 0.01)
        }
        Stopwatch.sleep(seconds: 0.2)
        return try daemon.memory()
    }
}
