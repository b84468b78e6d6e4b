import Foundation
import Posix
import TestSupport

extension ScratchDirectory {
    /// A directory on the real disk (`$TMPDIR`, else `/tmp`; not tmpfs: fsync must cost what it costs) for one run.
    convenience init() throws(BenchFailure) {
        self.init("offertrack-bench", base: Foundation.ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp")
        guard exists else { throw BenchFailure("cannot create the scratch directory \(path)") }
    }
}

/// The benchmark's measurements of a release `offertrackd` (the shared `DaemonProcess`): the time from process
/// start to `READY=1`, reloads, a clean stop.
extension DaemonProcess {
    /// Starts the daemon (default flags: durability full) on `<label>.sock` in `scratch` and waits for `READY=1`.
    convenience init(
        binary: String, scratch: ScratchDirectory, databasePath: String, label: String, arguments: [String] = []
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw BenchFailure("no offertrackd at \(binary): build it with `swift build -c release` or pass --daemon")
        }
        try self.init(
            binary: binary, directory: scratch, socketPath: scratch.file("\(label).sock"), databasePath: databasePath,
            stderrPath: scratch.file("\(label).log"), arguments: arguments,
            notify: NotifyListener(path: scratch.file("\(label).notify")))
        try waitReady()
    }

    /// Milliseconds from just before the process was spawned to the `READY=1` datagram.
    var readyMilliseconds: Double {
        guard let ready = notify.monotonicArrivals(of: "READY=1").first else { return 0 }
        return Double(ready - spawnedAt) / 1e6
    }

    /// What the daemon wrote to stderr (for failure messages).
    var log: String { stderr }

    private func waitReady() throws {
        let process = self.process
        guard
            let ready = notify.waitFor(timeoutSeconds: 120, while: { process.isRunning }, { $0 == "READY=1" })
        else {
            throw BenchFailure("offertrackd did not send READY=1; its stderr:\n\(log)")
        }
        notificationsSeen = ready.seen
    }

    /// Waits for a stderr line containing `text`; returns the milliseconds from the spawn to when it was seen
    /// (polled every 5 ms).
    func waitForLog(containing text: String, timeoutSeconds: Double) throws -> Double {
        let deadline = Stopwatch.now() + UInt64(timeoutSeconds * 1e9)
        while Stopwatch.now() < deadline {
            if log.contains(text) { return Double(Stopwatch.now() - spawnedAt) / 1e6 }
            Stopwatch.sleep(seconds: 0.005)
        }
        throw BenchFailure("offertrackd did not log \"\(text)\" in \(timeoutSeconds) s; its stderr:\n\(log)")
    }

    /// Waits for a `STATUS=` notification whose value satisfies `predicate` (the daemon sends one a second when
    /// its status changed).
    func waitForStatus(timeoutSeconds: Double, _ predicate: @escaping (Substring) -> Bool) throws {
        let isStatus: (Substring) -> Bool = { $0.hasPrefix("STATUS=") && predicate($0.dropFirst("STATUS=".count)) }
        guard let found = notify.waitFor(timeoutSeconds: timeoutSeconds, skip: notificationsSeen, isStatus) else {
            let last = notify.last { $0.hasPrefix("STATUS=") } ?? "none"
            throw BenchFailure("offertrackd did not reach the expected status in \(timeoutSeconds) s; last: \(last)")
        }
        notificationsSeen = found.seen
    }

    /// What a reload did to ingest: how long until `READY=1`, and the answers to records sent one at a time,
    /// every `interval`, from `RELOADING=1` until it.
    struct ReloadCost {
        var readyMilliseconds: Double
        /// Each probe's round trip, in milliseconds, in order.
        var probeMilliseconds: [Double]
        var answers: [String]
    }

    /// Sends SIGHUP (the caller changed the rules' windows), then, once `RELOADING=1` came, one record from
    /// `probe(n)` every `interval` seconds on one connection, each after the last was answered, until `READY=1`.
    func reload(interval: Double, probe: (Int) -> [UInt8]) throws -> ReloadCost {
        let start = Stopwatch.now()
        Signals.send(Signals.hangup, to: pid)
        guard let reloading = notify.waitFor(timeoutSeconds: 30, skip: notificationsSeen, { $0 == "RELOADING=1" })
        else { throw BenchFailure("offertrackd did not send RELOADING=1; its stderr:\n\(log)") }
        notificationsSeen = reloading.seen
        let fd = try UnixSocket.connect(path: socketPath)
        defer { FileDescriptor.close(fd) }
        UnixSocket.setReceiveTimeout(fd, seconds: 600)
        var cost = ReloadCost(readyMilliseconds: 0, probeMilliseconds: [], answers: [])
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let sent = Stopwatch.now()
            try FileDescriptor.writeAll(fd, probe(cost.answers.count) + [UInt8(ascii: "\n")])
            var answer: [UInt8] = []
            while !answer.contains(UInt8(ascii: "\n")) {
                let result = try buffer.withUnsafeMutableBytes { try FileDescriptor.read(fd, into: $0) }
                guard case .transferred(let count) = result, count > 0 else { break }
                answer += buffer[0..<count]
            }
            cost.probeMilliseconds.append(Double(Stopwatch.now() - sent) / 1e6)
            cost.answers.append(String(decoding: answer, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            if let ready = notify.waitFor(timeoutSeconds: interval, skip: notificationsSeen, { $0 == "READY=1" }) {
                notificationsSeen = ready.seen
                cost.readyMilliseconds = Double(ready.at - start) / 1e6
                return cost
            }
            guard Double(Stopwatch.now() - start) / 1e9 < 600 else {
                throw BenchFailure("offertrackd did not send READY=1 within 600 s of SIGHUP; its stderr:\n\(log)")
            }
        }
    }

    /// Stops the daemon with SIGTERM (a clean drain) and waits for it; fails if it does not exit 0.
    func stop() throws {
        Signals.send(Signals.terminate, to: pid)
        let deadline = Stopwatch.now() + 60_000_000_000
        while process.isRunning && Stopwatch.now() < deadline { Stopwatch.sleep(seconds: 0.005) }
        guard !process.isRunning else {
            throw BenchFailure("offertrackd did not stop within 60 s of SIGTERM; its stderr:\n\(log)")
        }
        guard process.terminationStatus == 0 else {
            throw BenchFailure("offertrackd exited \(process.terminationStatus); its stderr:\n\(log)")
        }
    }

    /// The daemon's memory figures from `/proc/PID/status`.
    func memory() throws -> ProcessMemory {
        try ProcessMemory.read(pid: pid)
    }
}
