import Glibc

/// Facts about this process and files it needs.
public enum CurrentProcess {
    /// This process's real uid.
    public static var uid: UInt32 { getuid() }
    /// This process's id.
    public static var pid: Int32 { getpid() }
    /// The value of environment variable `name`.
    public static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
    /// The size in bytes of the file at `path`, or nil when it does not exist.
    public static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }
    /// The device and inode of the file at `path` (the same file under two names has one), or nil when it does not
    /// exist.
    public static func fileIdentity(_ path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
    /// Whether `path` names an existing directory.
    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
    /// Exits the process immediately with `code`.
    public static func exit(_ code: Int32) -> Never { Glibc.exit(code) }
    /// Ends this process with `code` at once, from any thread: no exit handlers run (`_exit`).
    public static func exitImmediately(_ code: Int32) -> Never { Glibc._exit(code) }
    #if OFFERTRACK_FAULT_HOOKS
        /// Kills this process with SIGKILL, as `kill -9` would: for the crash tests' hooks, so debug builds only.
        public static func killImmediately() -> Never {
            Glibc.kill(getpid(), SIGKILL)
            Glibc.abort()
        }
    #endif
}

/// Which file a path names: its device and inode.
public struct FileIdentity: Hashable, Sendable {
    public let device: UInt64
    public let inode: UInt64
}

/// How much this process has done so far: bytes it read and wrote through system calls (`/proc/self/io`
/// `rchar` + `wchar`, page-cache hits included) and the CPU time of all its threads. A process blocked on a hung
/// disk advances neither.
public struct ProcessActivity: Equatable, Sendable {
    public var ioBytes: UInt64
    public var cpuNanoseconds: UInt64

    public init(ioBytes: UInt64, cpuNanoseconds: UInt64) {
        self.ioBytes = ioBytes
        self.cpuNanoseconds = cpuNanoseconds
    }

    /// This process's activity now (I/O 0 when `/proc/self/io` cannot be read).
    public static func now() -> ProcessActivity {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        let cpu = UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        var io: UInt64 = 0
        if let bytes = FileSystem.readFile("/proc/self/io") {
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n")
            where line.hasPrefix("rchar:") || line.hasPrefix("wchar:") {
                io += UInt64(line.split(separator: " ").last ?? "") ?? 0
            }
        }
        return ProcessActivity(ioBytes: io, cpuNanoseconds: cpu)
    }
}
