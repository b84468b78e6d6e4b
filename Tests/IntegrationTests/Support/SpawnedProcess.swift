import Foundation
import Glibc

/// A child started with `posix_spawn` and reaped by its pid, outside Foundation's `Process`.
///
/// `Process` learns that a child ended when a socket the child inherited closes, then blocks in `waitpid`
/// on one shared thread. `systemd-socket-activate` closes every inherited descriptor, so a daemon launched
/// through it with `Process` looks dead at once, that thread blocks for the daemon's whole life, and every
/// later `Process` in the test run never completes.
final class SpawnedProcess {
    let pid: pid_t
    private var status: Int32?

    /// Starts `arguments[0]` (an absolute path) with exactly `environment`, stdout to /dev/null, stderr to
    /// `stderrPath`, and no other inherited descriptors.
    init(_ arguments: [String], environment: [String: String], stderrPath: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, arguments[0], &actions, nil, argv, envp)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL) }
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

    var isRunning: Bool {
        guard status == nil else { return false }
        var raw: Int32 = 0
        if waitpid(pid, &raw, WNOHANG) == pid { status = raw }
        return status == nil
    }

    /// Waits up to `timeout` seconds; the exit code, `128 + signal` when killed, or nil while still running.
    func waitExit(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning && Date() < deadline { usleep(10_000) }
        guard let status else { return nil }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + status & 0x7f
    }

    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            waitpid(pid, &raw, 0)
        }
    }
}
