import Foundation

/// A real `offertrackd` process on a scratch socket and journal, with a notification listener standing in for
/// systemd: what the integration tests and the benchmark both start.
public final class DaemonProcess {
    public let directory: ScratchDirectory
    public let notify: NotifyListener
    public let process = Process()
    public let socketPath: String
    public let databasePath: String
    public let stderrPath: String
    /// `NotifyListener.monotonicNanoseconds()` just before the process was spawned.
    public let spawnedAt: UInt64
    /// Notifications already looked at (for waiting on the next one with `NotifyListener.waitFor(…skip:)`).
    public var notificationsSeen = 0

    /// Starts `binary` with `--socket socketPath` (unless `launcher` runs it through another program, e.g.
    /// `systemd-socket-activate`, which passes the socket), `--db databasePath` and `arguments`; its stderr goes
    /// to `stderrPath`, `NOTIFY_SOCKET` is `notify`'s.
    public init(
        binary: String, directory: ScratchDirectory, socketPath: String, databasePath: String, stderrPath: String,
        arguments extra: [String] = [], environment: [String: String] = [:], launcher: [String] = [],
        notify: NotifyListener
    ) throws {
        self.directory = directory
        self.notify = notify
        self.socketPath = socketPath
        self.databasePath = databasePath
        self.stderrPath = stderrPath
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        var arguments = ["--db", databasePath] + extra
        if launcher.isEmpty {
            arguments = ["--socket", socketPath] + arguments
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: launcher[0])
            process.arguments = Array(launcher.dropFirst()) + [binary] + arguments
        }
        var env = ProcessInfo.processInfo.environment
        env["NOTIFY_SOCKET"] = notify.path
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        process.standardOutput = FileHandle.nullDevice
        spawnedAt = NotifyListener.monotonicNanoseconds()
        try process.run()
    }

    deinit {
        if process.isRunning {
            signal(Signals.kill)
            process.waitUntilExit()
        }
    }

    public var pid: Int32 { process.processIdentifier }

    public func signal(_ signal: Int32) { Signals.send(signal, to: pid) }

    /// Waits until the daemon's stderr holds `text` (a line it logs after `READY=1`, such as "listening on ", may
    /// still be on its way when the notification is read); whether it came within `timeout` seconds.
    @discardableResult
    public func waitForLog(containing text: String, timeout: TimeInterval = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !stderr.contains(text) {
            guard Date() < deadline else { return false }
            usleep(10_000)
        }
        return true
    }

    /// Waits for the process to exit; returns its exit status, or nil on timeout.
    public func waitExit(timeout: TimeInterval = 20) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// Kills the daemon with SIGKILL and waits for it.
    public func kill() {
        signal(Signals.kill)
        _ = waitExit()
    }

    /// What the daemon wrote to stderr.
    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
}
