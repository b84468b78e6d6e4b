import Foundation
import SQLite
import Simulator
import TestSupport
import Testing

/// An export day is published in short transactions (schema 9), with the real binaries: a kill -9 anywhere while
/// it is staged publishes nothing and the next export is exact, and the daemon commits records between the chunks.
@Suite(.serialized) struct ExportStagingProcessTests {
    static let day = "2026-11-01"
    /// Parts of 2,000 bytes and 50 ledger changes a transaction: the day below takes a few dozen transactions.
    static let smallChunks = ["OFFERTRACK_TEST_EXPORT_PART_BYTES": "2000", "OFFERTRACK_TEST_EXPORT_ENTRIES": "50"]

    /// A journal holding a simulated day, written by a daemon that is then stopped.
    static func journal(in directory: ScratchDirectory) throws -> (path: String, rules: String)? {
        let rules = directory.file("rules.json")
        try IngestedDaemon.rules.write(toFile: rules, atomically: true, encoding: .utf8)
        let lines = Array(WorkloadSimulator(users: 2_000, seed: 41, days: 1).lines)
        guard let daemon = try IngestedDaemon.start(in: directory, rules: rules, lines: lines) else {
            return nil
        }
        DaemonProcess.terminateCleanly([daemon])
        return (daemon.databasePath, rules)
    }

    static func export(
        _ path: String, rules: String, out: String, environment: [String: String] = [:]
    ) throws -> Shell.Outcome {
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        return try Shell.run(
            Binaries.cli, ["export", "--date", day, "--out", out, "--db", path, "--rules", rules],
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
    }

    static func count(_ sql: String, in path: String) throws -> Int64 {
        try Connection(path: path, mode: .readOnly).scalarInt(sql) ?? -1
    }

    /// SIGKILL after a seeded choice of chunks (the last one too: everything staged, nothing published): the day
    /// is not published and no file is written; the journal passes `integrity_check`; the next export writes
    /// exactly what an export that was never interrupted wrote, and deletes what the killed one staged.
    @Test func killedAnywhereWhileStagingPublishesNothingAndTheNextExportIsExact() throws {
        let directory = ScratchDirectory()
        guard let (original, rules) = try Self.journal(in: directory) else { return }
        let reference = directory.file("reference.db")
        try FileManager.default.copyItem(atPath: original, toPath: reference)
        let clean = try Self.export(
            reference, rules: rules, out: directory.file("clean"), environment: Self.smallChunks)
        #expect(clean.status == 0, "\(clean.output)")
        let csv = try Data(contentsOf: URL(fileURLWithPath: directory.file("clean/commissions-\(Self.day).csv")))
        let parts = try Self.count("SELECT count(*) FROM export_parts", in: reference)
        let entries = try Self.count("SELECT count(*) FROM ledger_entries", in: reference)
        let lines = try Self.count("SELECT count(*) FROM export_lines", in: reference)
        let chunks = Int(parts + (lines + 49) / 50 + (entries + 49) / 50)
        #expect(parts > 5 && entries > 100, "\(parts) parts and \(entries) entries: the day is too small")

        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let kills = Set((0..<4).map { _ in Int.random(in: 1..<chunks, using: &random) } + [chunks])
        for kill in kills.sorted() {
            let context = "killed after chunk \(kill) of \(chunks) (seed \(seed))"
            let path = directory.file("killed-\(kill).db")
            try FileManager.default.copyItem(atPath: original, toPath: path)
            let out = directory.file("out-\(kill)")
            let killed = try Self.export(
                path, rules: rules, out: out,
                environment: Self.smallChunks.merging(["OFFERTRACK_TEST_EXPORT_KILL_AFTER_CHUNK": String(kill)]) { $1 })
            #expect(killed.output.contains("SIGKILL after chunk \(kill)"), "\(context): \(killed.output)")
            #expect(try Self.count("SELECT count(*) FROM published_days", in: path) == 0, "\(context)")
            #expect(
                try Connection(path: path, mode: .readOnly).scalarText("PRAGMA integrity_check") == "ok", "\(context)")
            #expect(!FileManager.default.fileExists(atPath: "\(out)/commissions-\(Self.day).csv"), "\(context)")
            let again = try Self.export(path, rules: rules, out: out)
            #expect(again.status == 0, "\(context): \(again.output)")
            let written = try Data(contentsOf: URL(fileURLWithPath: "\(out)/commissions-\(Self.day).csv"))
            #expect(written == csv, "\(context): the day differs from an uninterrupted export")
            #expect(try Self.count("SELECT count(*) FROM export_runs", in: path) == 1, "\(context): runs left")
            #expect(
                try Self.count(
                    "SELECT count(*) FROM ledger_entries WHERE run NOT IN (SELECT run FROM published_days)", in: path)
                    == 0, "\(context): entries of the killed run left")
            #expect(
                try Self.count(
                    "SELECT count(*) FROM export_parts WHERE run NOT IN (SELECT run FROM published_days)", in: path)
                    == 0, "\(context): parts of the killed run left")
            #expect(
                try Self.count(
                    "SELECT count(*) FROM export_lines WHERE run NOT IN (SELECT run FROM published_days)", in: path)
                    == 0, "\(context): lines of the killed run left")
        }
        print("export kill test (seed \(seed)): killed after chunks \(kills.sorted()) of \(chunks)")
        // verify reads each published day back and checks it against its manifest: a part lost is found.
        let verified = try Shell.run(Binaries.cli, ["verify", "--db", reference, "--rules", rules])
        #expect(verified.status == 0 && verified.output.contains("ok: published export days"), "\(verified.output)")
        try Connection(path: reference, mode: .readWrite).execute("DELETE FROM export_parts WHERE part = 1")
        let damaged = try Shell.run(Binaries.cli, ["verify", "--db", reference, "--rules", rules])
        #expect(
            damaged.status != 0 && damaged.output.contains("\(Self.day): its CSV does not hash"), "\(damaged.output)")
    }

    /// The export paused after its first chunk (a test hook) holds no lock: the running daemon journals and
    /// acknowledges new records meanwhile, and the export then finishes.
    @Test func theDaemonCommitsWhileAnExportIsStaged() throws {
        let directory = ScratchDirectory()
        guard let (path, rules) = try Self.journal(in: directory) else { return }
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules], databasePath: path)
        guard daemon.waitReady() else { return }
        defer { DaemonProcess.terminateCleanly([daemon]) }
        let pause = directory.file("export-paused")
        try FileManager.default.createDirectory(atPath: directory.file("out"), withIntermediateDirectories: true)
        let export = Process()
        export.executableURL = URL(fileURLWithPath: Binaries.cli)
        export.arguments = [
            "export", "--date", Self.day, "--out", directory.file("out"), "--db", path, "--rules", rules,
        ]
        export.environment = ProcessInfo.processInfo.environment.merging(
            Self.smallChunks.merging([
                "OFFERTRACK_TEST_EXPORT_PAUSE_AFTER_CHUNK": "1", "OFFERTRACK_TEST_EXPORT_PAUSE_FILE": pause,
            ]) { $1 }
        ) { $1 }
        try export.run()
        defer { if export.isRunning { export.terminate() } }
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: pause) && export.isRunning && Date() < deadline {
            usleep(10_000)
        }
        #expect(FileManager.default.fileExists(atPath: pause), "the export never paused")
        // Records of a later day, sent while the export sits between two chunks.
        let later = Array(
            WorkloadSimulator(
                users: 50, seed: 42, start: WorkloadSimulator.defaultStart + 9 * 86_400_000, days: 1
            ).lines)
        let file = directory.file("later.ndjson")
        try later.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let ingest = try Shell.run(Binaries.cli, ["ingest", file, "--socket", daemon.socketPath, "--retry-for", "20"])
        #expect(ingest.status == 0, "records waited for the paused export: \(ingest.output)")
        #expect(export.isRunning, "the export did not wait at its pause")
        try FileManager.default.removeItem(atPath: pause)
        export.waitUntilExit()
        #expect(export.terminationStatus == 0)
        #expect(try Self.count("SELECT count(*) FROM published_days WHERE day = '\(Self.day)'", in: path) == 1)
    }
}
