import Foundation
import TestSupport
import Testing

/// The daemon under strace tracing `trace`, injecting `inject` (when given) into them, on `path` only
/// (when given); the traced calls go to `output` with their times (`-ttt`) when given.
final class TracedDaemon {
    let daemon: DaemonProcess
    let pid: Int32

    init(
        in directory: ScratchDirectory, trace: String, inject: String? = nil, path: String? = nil,
        environment: [String: String] = [:], output: String? = nil
    ) throws {
        daemon = try DaemonProcess(
            in: directory, arguments: ["--socket", directory.file("offertrack.sock")],
            environment: environment,
            launcher: [
                "/usr/bin/strace", "-f", "-qq", "-o", output ?? "/dev/null", "-ttt", "-e", "trace=\(trace)",
            ]
                + (inject.map { ["-e", "inject=\($0)"] } ?? []) + (path.map { ["-P", $0] } ?? []))
        // The traced daemon: the process running offertrackd on this journal (not strace, whose command
        // line names them too).
        let deadline = Date().addingTimeInterval(20)
        var child: Int32?
        while child == nil && Date() < deadline {
            child = Self.daemonPID(databasePath: daemon.databasePath)
            if child == nil { usleep(10_000) }
        }
        pid = try #require(child, "strace started no daemon: \(daemon.stderr)")
    }

    static func daemonPID(databasePath: String) -> Int32? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry),
                let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe"),
                exe == Binaries.daemon,
                let command = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
                String(decoding: command, as: UTF8.self).contains(databasePath)
            else { continue }
            return pid
        }
        return nil
    }

    /// SIGTERM to the daemon itself (strace would only detach); strace ends with the daemon's status.
    func stop() -> Int32? {
        Signals.send(Signals.terminate, to: pid)
        return daemon.waitExit()
    }

    deinit { Signals.send(Signals.kill, to: pid) }
}
