import Foundation
import Posix
import TestSupport
import Testing

/// `offertrack ingest` delivers everything exactly once in effect across daemon crashes and a full disk.
@Suite struct IngestRetryTests {
    /// Runs `offertrack ingest FILE` in the background; the result arrives when it exits.
    final class IngestRun: @unchecked Sendable {
        let process = Process()
        let output = Pipe()

        init(file: String, socket: String) throws {
            process.executableURL = URL(fileURLWithPath: Binaries.cli)
            process.arguments = ["ingest", file, "--socket", socket, "--retry-for", "60"]
            process.standardOutput = output
            process.standardError = output
            try process.run()
        }

        func finish() -> (status: Int32, output: String) {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
    }

    static func writeLines(_ lines: [String], to path: String) throws {
        try Data(lines.map { $0 + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test func aDaemonKilledAndRestartedMidIngestLosesAndDoublesNothing() throws {
        let directory = ScratchDirectory()
        let lines = TestRecords.stream(prefix: "k", count: 60000)
        let file = directory.file("records.ndjson")
        try Self.writeLines(lines, to: file)
        let notify = try NotifyListener(in: directory)
        var daemon = try DaemonProcess(in: directory, notify: notify)
        guard daemon.waitReady() else { return }
        let ingest = try IngestRun(file: file, socket: daemon.socketPath)
        // Killed mid-ingest, not before it connected nor after it finished: once part of it is journaled.
        let deadline = Date().addingTimeInterval(30)
        var journaled: Int64 = 0
        while journaled < 1000 && Date() < deadline {
            usleep(2000)
            journaled = (try? JournalInspector(path: daemon.databasePath).count()) ?? 0
        }
        daemon.kill()
        let atKill = try JournalInspector(path: daemon.databasePath).count()
        #expect(atKill >= 1000 && atKill < Int64(lines.count), "killed with \(atKill) of \(lines.count) journaled")
        usleep(500_000)
        notify.reset()
        daemon = try DaemonProcess(in: directory, notify: notify)
        daemon.waitReady()
        let result = ingest.finish()
        #expect(result.status == 0, "\(result.output)")
        let counts = result.output.split(separator: "\n").reduce(into: [String: Int]()) { counts, line in
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Int(parts[1]) { counts[String(parts[0])] = value }
        }
        #expect((counts["accepted"] ?? 0) + (counts["duplicate"] ?? 0) == lines.count, "\(result.output)")
        #expect(counts["rejected"] == 0)
        let inspector = try JournalInspector(path: daemon.databasePath)
        #expect(try inspector.count() == Int64(lines.count))
        #expect(try inspector.integrityCheck() == "ok")
    }

    @Test func storageUnavailableIsRetriedUntilRoomComesBack() throws {
        let directory = ScratchDirectory()
        let disk = try SmallFilesystem(in: directory, size: "32m")
        let daemon = try DaemonProcess(in: directory, databasePath: "\(disk.path)/offertrack.db")
        guard daemon.waitReady() else { return }
        try disk.fill()
        let lines = TestRecords.stream(prefix: "f", count: 20000)
        let file = directory.file("records.ndjson")
        try Self.writeLines(lines, to: file)
        let ingest = try IngestRun(file: file, socket: daemon.socketPath)
        #expect(daemon.notify.waitFor(timeout: 10) { $0.contains("JOURNAL FAILING") } != nil)
        try disk.free()
        let result = ingest.finish()
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.hasPrefix("accepted 20000\nduplicate 0\nrejected 0\n"), "\(result.output)")
        #expect(try JournalInspector(path: daemon.databasePath).count() == 20000)
    }

    /// A peer the daemon refuses gets one `unauthorized` answer with id null: ingest stops at once (exit 69) with
    /// one message, instead of reporting line after line and retrying for the whole --retry-for window (20 s).
    @Test func aRefusedPeerEndsTheRunAtOnceWithExit69() throws {
        let directory = ScratchDirectory()
        chmod(directory.path, 0o755)
        let daemon = try DaemonProcess(in: directory)
        guard daemon.waitReady() else { return }
        chmod(daemon.socketPath, 0o666)
        let file = directory.file("records.ndjson")
        try Self.writeLines(TestRecords.stream(prefix: "refused", count: 50), to: file)
        chmod(file, 0o644)
        let started = Date()
        let outcome = try Shell.run(
            "/usr/bin/setpriv",
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", Binaries.cli, "ingest", file, "--socket",
                daemon.socketPath, "--retry-for", "20",
            ])
        let elapsed = Date().timeIntervalSince(started)
        #expect(outcome.status == 69, "\(outcome.output)")
        #expect(elapsed < 10, "ingest took \(elapsed) s of its 20 s retry window")
        let lines = outcome.output.split(separator: "\n")
        #expect(lines.count == 1 && outcome.output.contains("unauthorized"), "\(outcome.output)")
        #expect(try JournalInspector(path: daemon.databasePath).count() == 0)
    }

    @Test func aBadRetryForValueIsAUsageError() throws {
        for value in ["abc", "-1", "1.5"] {
            let outcome = try Shell.run(Binaries.cli, ["ingest", "/dev/null", "--retry-for", value])
            #expect(outcome.status == 64, "--retry-for \(value): \(outcome.output)")
        }
    }
}
