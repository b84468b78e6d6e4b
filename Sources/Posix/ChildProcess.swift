import Glibc

/// A child started with `posix_spawn` and reaped by its pid, with no descriptors inherited beyond 0–2.
///
/// Foundation's `Process` closes every descriptor up to the open-file limit in the child (milliseconds each
/// start when the limit is raised, as the daemon's tests and bench do) and learns that a child ended from a pipe
/// the child inherits; this does neither.
public final class ChildProcess {
    public let pid: pid_t
    private var status: Int32?

    /// Starts `arguments[0]` (an absolute path) with exactly `environment`, stdin from /dev/null, stdout to
    /// `stdoutPath` and stderr to `stderrPath` (both appended, created if needed).
    public init(
        _ arguments: [String], environment: [String: String], stdoutPath: String = "/dev/null", stderrPath: String
    ) throws(PosixError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, arguments.first ?? "", &actions, nil, argv, envp)
        guard result == 0 else { throw PosixError("posix_spawn(\(arguments.first ?? ""))", errno: result) }
        pid = child
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which Swift does not import.
    private static let addCloseFrom:
        (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
            guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np")  // nil: RTLD_DEFAULT
            else { return nil }
            return unsafeBitCast(
                symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }()

    public var isRunning: Bool {
        guard status == nil else { return false }
        var raw: Int32 = 0
        if waitpid(pid, &raw, WNOHANG) == pid { status = raw }
        return status == nil
    }

    /// Waits until the child ends; its exit code, or `128 + signal` when killed.
    public func wait() -> Int32 {
        if status == nil {
            var raw: Int32 = 0
            _ = try? valueOrErrno("waitpid") { waitpid(pid, &raw, 0) }
            status = raw
        }
        return Self.exitCode(status ?? 0)
    }

    /// Waits up to `timeout` seconds; the exit code, `128 + signal` when killed, or nil while still running.
    public func waitExit(timeout: Double) -> Int32? {
        let deadline = Clock.monotonicMicroseconds() + UInt64(max(0, timeout) * 1_000_000)
        while isRunning && Clock.monotonicMicroseconds() < deadline { usleep(10_000) }
        return status.map(Self.exitCode)
    }

    private static func exitCode(_ status: Int32) -> Int32 {
        status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + status & 0x7f
    }

    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            waitpid(pid, &raw, 0)
        }
    }
}
