import Foundation
import Posix
import Testing

/// A real `offertrackd` process on a scratch socket and database, with a notification listener.
final class DaemonProcess {
    let directory: ScratchDirectory
    let notify: NotifyListener
    let process = Process()
    let socketPath: String
    let databasePath: String
    let stderrPath: String

    /// Starts the daemon. `launcher` runs it through another program (e.g. `systemd-socket-activate`).
    init(
        in directory: ScratchDirectory, arguments extra: [String] = [], environment: [String: String] = [:],
        launcher: [String] = [], notify existing: NotifyListener? = nil, databasePath: String? = nil
    ) throws {
        self.directory = directory
        notify = try existing ?? NotifyListener(in: directory)
        socketPath = directory.file("offertrack.sock")
        self.databasePath = databasePath ?? directory.file("offertrack.db")
        stderrPath = directory.file("daemon-\(UInt16.random(in: 0...UInt16.max)).log")
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        var arguments = ["--db", self.databasePath] + extra
        if launcher.isEmpty { arguments = ["--socket", socketPath] + arguments }
        if launcher.isEmpty {
            process.executableURL = URL(fileURLWithPath: Binaries.daemon)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: launcher[0])
            process.arguments = Array(launcher.dropFirst()) + [Binaries.daemon] + arguments
        }
        var env = ProcessInfo.processInfo.environment
        env["NOTIFY_SOCKET"] = notify.path
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// Waits for `READY=1`; fails the test with the daemon's stderr when it does not come.
    @discardableResult
    func waitReady(timeout: TimeInterval = 20, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let ready = notify.waitFor(line: "READY=1", timeout: timeout) != nil
        #expect(ready, "offertrackd did not send READY=1; stderr: \(stderr)", sourceLocation: sourceLocation)
        return ready
    }

    func signal(_ signal: Int32) { Signals.send(signal, to: pid) }

    /// Waits for the process to exit; returns its exit status, or nil on timeout.
    func waitExit(timeout: TimeInterval = 20) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// Kills the daemon with SIGKILL and waits for it.
    func kill() {
        signal(Signals.kill)
        _ = waitExit()
    }

    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    deinit {
        if process.isRunning {
            signal(Signals.kill)
            process.waitUntilExit()
        }
    }
}
