import Foundation
import JournalStore
import SQLite
import Simulator
import TestSupport
import Testing

/// Schema 7 → 8 (per-user access on integer keys), on a journal the schema-7 offertrackd made
/// (`Fixtures/schema7/journal.db`: simulated returning and new users, reviews, three published days). Its
/// `outputs/` are what the schema-7 offertrack wrote from it with `record-outputs.sh`.
@Suite(.serialized) struct SchemaMigrationTests {
    static let fixture = Schema7Fixture.directory
    static var rules: String { Schema7Fixture.rules }
    /// Users in the fixture (one key each, in user order).
    static let fixtureUsers: Int64 = 400

    static func schemaVersion(_ path: String) throws -> Int64? {
        try Connection(path: path, mode: .readOnly).scalarInt("PRAGMA user_version")
    }

    /// Starts the daemon on the journal (which migrates it) and stops it; returns its stderr.
    @discardableResult
    static func migrateWithDaemon(in directory: ScratchDirectory, notify: NotifyListener? = nil) throws -> String {
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules], notify: notify)
        guard daemon.waitReady() else { return daemon.stderr }
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0, "stderr: \(daemon.stderr)")
        return daemon.stderr
    }

    /// Every table's and index's definition, in name order.
    static func tableDefinitions(_ path: String) throws -> String? {
        try Connection(path: path, mode: .readOnly).scalarText(
            "SELECT group_concat(name || ': ' || coalesce(sql, ''), '; ') FROM (SELECT * FROM sqlite_master ORDER BY name)"
        )
    }

    /// Every file under `directory`, relative to it, sorted.
    static func files(under directory: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: directory)
        var found: [String] = []
        while let name = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: "\(directory)/\(name)", isDirectory: &isDirectory)
            if !isDirectory.boolValue { found.append(name) }
        }
        return found.sorted()
    }

    /// Runs `record-outputs.sh` with this build's offertrack on `journal` into `out` and returns its output.
    static func recordOutputs(journal: String, out: String) throws -> Shell.Outcome {
        try Shell.run("/bin/sh", ["\(fixture)/record-outputs.sh", Binaries.cli, journal, out])
    }

    /// After migration every report (each grouping and format, a time range too), explanation (every format,
    /// by user and by id), export of every day of the month and the month's payouts is byte for byte what the
    /// schema-7 offertrack wrote (exports' generatedAt aside: it is when the command ran); verify passes.
    @Test func migratedJournalAnswersExactlyAsSchema7Did() throws {
        let directory = ScratchDirectory()
        let path = try Schema7Fixture.copy(in: directory)
        #expect(try Self.schemaVersion(path) == 7)
        try Self.migrateWithDaemon(in: directory)
        #expect(try Self.schemaVersion(path) == Schema.currentVersion)
        let connection = try Connection(path: path, mode: .readOnly)
        #expect(try connection.scalarInt("SELECT count(*) FROM users") == Self.fixtureUsers)
        #expect(
            try connection.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'records_by_user'") == 0,
            "the text index is still there")
        // Schema 14 stores a published day's lines; the days published before keep their CSV only.
        #expect(try connection.scalarInt("SELECT count(*) FROM export_lines") == 0)
        #expect(try connection.scalarInt("SELECT count(*) FROM published_days WHERE run IS NULL") == 3)
        let out = directory.file("outputs")
        let run = try Self.recordOutputs(journal: path, out: out)
        #expect(run.status == 0, "\(run.output)")
        let expected = "\(Self.fixture)/outputs"
        #expect(Self.files(under: out) == Self.files(under: expected))
        for name in Self.files(under: expected) where name != "verify.txt" {
            let old = FileManager.default.contents(atPath: "\(expected)/\(name)")
            var new = FileManager.default.contents(atPath: "\(out)/\(name)")
            if name.hasSuffix(".json"), let text = new.map({ String(decoding: $0, as: UTF8.self) }) {
                // SPEC v5 added explain's `erasure` key (null for everyone here); the rest must not move.
                new = Data(text.replacingOccurrences(of: #","erasure":null}"#, with: "}").utf8)
            }
            if name.hasSuffix(".html"), let old, let new {
                // The page's layout changed since schema 7 (issue 44: money first); its table's numbers must not.
                let table = { (page: Data) in ReportTable.values(String(decoding: page, as: UTF8.self)) }
                #expect(!table(old).isEmpty && table(old) == table(new), "\(name)'s table differs from schema 7's")
                continue
            }
            #expect(old != nil && old == new, "\(name) differs from schema 7's")
        }
        let verify = try String(contentsOfFile: "\(out)/verify.txt", encoding: .utf8)
        let lines = verify.split(separator: "\n")
        #expect(lines.count >= 9 && lines.allSatisfy { $0.hasPrefix("ok: ") }, "\(verify)")
        #expect(verify.contains("ok: the per-user index lists every record once, under its user"), "\(verify)")
    }

    /// The migration's progress lines carry an sd-daemon priority and the name of the program that migrates:
    /// `<6>offertrackd: ` at the daemon's start (whose every line is prefixed), `<6>offertrack: ` in `rebuild`.
    @Test func migrationLinesCarryAPriorityAndTheProgramsName() throws {
        let started = ScratchDirectory()
        _ = try Schema7Fixture.copy(in: started)
        let daemonLog = try Self.migrateWithDaemon(in: started)
        let daemonLines = daemonLog.split(separator: "\n").filter { $0.contains("the journal to schema 8") }
        #expect(daemonLines.count == 2, "\(daemonLog)")
        #expect(daemonLines.first?.hasPrefix("<6>offertrackd: migrating the journal to schema 8") == true)
        #expect(daemonLines.last?.hasPrefix("<6>offertrackd: migrated the journal to schema 8 in ") == true)
        DaemonLog.expectEveryLinePrefixed(daemonLog)
        let rebuilt = ScratchDirectory()
        let path = try Schema7Fixture.copy(in: rebuilt)
        let rebuild = try Shell.run(Binaries.cli, ["rebuild", "--db", path, "--rules", Self.rules])
        #expect(rebuild.status == 0, "\(rebuild.output)")
        #expect(try Self.schemaVersion(path) == Schema.currentVersion)
        let cliLines = rebuild.output.split(separator: "\n").filter { $0.contains("the journal to schema 8") }
        #expect(cliLines.count == 2, "\(rebuild.output)")
        #expect(cliLines.first?.hasPrefix("<6>offertrack: migrating the journal to schema 8") == true)
        #expect(cliLines.last?.hasPrefix("<6>offertrack: migrated the journal to schema 8 in ") == true)
    }

    /// `rebuild` lists every record under its user's key again (an index emptied by hand comes back), and the
    /// reports stay what schema 7 answered.
    @Test func rebuildRecomputesThePerUserIndex() throws {
        let directory = ScratchDirectory()
        let path = try Schema7Fixture.copy(in: directory)
        try Self.migrateWithDaemon(in: directory)
        try Connection(path: path, mode: .readWrite).execute("DELETE FROM by_user WHERE k % 3 = 0")
        let broken = try Shell.run(Binaries.cli, ["verify", "--db", path, "--rules", Self.rules])
        #expect(broken.status != 0 && broken.output.contains("per-user index entries"), "\(broken.output)")
        let rebuild = try Shell.run(Binaries.cli, ["rebuild", "--db", path, "--rules", Self.rules])
        #expect(rebuild.status == 0, "\(rebuild.output)")
        let verify = try Shell.run(Binaries.cli, ["verify", "--db", path, "--rules", Self.rules])
        #expect(verify.status == 0, "\(verify.output)")
        let report = try Shell.run(
            Binaries.cli, ["report", "--db", path, "--rules", Self.rules, "--as-of", "2026-12-31", "--format", "csv"])
        let old = try String(contentsOfFile: "\(Self.fixture)/outputs/report-affiliate.csv", encoding: .utf8)
        #expect(report.status == 0 && report.output == old, "\(report.output)")
    }

    /// kill -9 at every step of the migration (a test hook makes it SIGKILL itself), with a seeded random number
    /// of users per index step so that the steps fall at other places each run: the journal is then either
    /// schema 7 exactly as before (no table of schema 8, the text index there) or schema 8, never between; it
    /// passes SQLite's integrity check, the next start migrates it if needed, and it verifies and reports as
    /// schema 7 did.
    @Test func killedAnywhereDuringMigrationLeavesTheOldOrTheNewSchema() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let usersPerStep = 10 + Int64(random.next() % 90)
        // Steps: BEGIN, users, one per index step, conversions, the old index dropped, COMMIT.
        let indexSteps = Int((Self.fixtureUsers + usersPerStep - 1) / usersPerStep)
        let steps = 2 + indexSteps + 3
        var outcomes: [Int64: Int] = [:]
        let oldReport = try String(
            contentsOfFile: "\(Self.fixture)/outputs/report-campaign.csv", encoding: .utf8)
        let originalTables = try Self.tableDefinitions("\(Self.fixture)/journal.db")
        var order = Array(0..<steps)
        order.shuffle(using: &random)
        for step in order {
            let context = "kill after step \(step) of \(steps), \(usersPerStep) users a step (seed \(seed))"
            let directory = ScratchDirectory()
            let path = try Schema7Fixture.copy(in: directory)
            let killed = try DaemonProcess(
                in: directory, arguments: ["--rules", Self.rules],
                environment: [
                    "OFFERTRACK_TEST_MIGRATION_KILL_AFTER_STEP": String(step),
                    "OFFERTRACK_TEST_MIGRATION_USERS_PER_STEP": String(usersPerStep),
                ])
            _ = killed.waitExit()
            #expect(killed.stderr.contains("SIGKILL after step \(step)"), "\(context): \(killed.stderr)")
            let version = try #require(try Self.schemaVersion(path), "\(context)")
            outcomes[version, default: 0] += 1
            let connection = try Connection(path: path, mode: .readOnly)
            #expect(try connection.scalarText("PRAGMA integrity_check") == "ok", "\(context)")
            let tables = try connection.scalarInt(
                "SELECT count(*) FROM sqlite_master WHERE name IN ('users', 'by_user', 'derived_conversions_8')")
            let textIndex = try connection.scalarInt(
                "SELECT count(*) FROM sqlite_master WHERE name = 'records_by_user'")
            switch version {
            case 7:
                #expect(tables == 0 && textIndex == 1, "\(context): half of schema 8")
                #expect(try Self.tableDefinitions(path) == originalTables, "\(context): schema 7 changed")
            case 8: #expect(tables == 2 && textIndex == 0, "\(context): half of schema 7")
            default: Issue.record("\(context): schema \(version)")
            }
            #expect(try connection.scalarInt("SELECT count(*) FROM records") == 2284, "\(context)")
            try Self.migrateWithDaemon(in: directory, notify: killed.notify)
            let verify = try Shell.run(Binaries.cli, ["verify", "--db", path, "--rules", Self.rules])
            #expect(verify.status == 0, "\(context): \(verify.output)")
            let report = try Shell.run(
                Binaries.cli,
                [
                    "report", "--db", path, "--rules", Self.rules, "--as-of", "2026-12-31", "--by", "campaign",
                    "--format", "csv",
                ])
            #expect(report.output == oldReport, "\(context)")
        }
        #expect(outcomes[7] != nil && outcomes[8] != nil, "killed always at one side of COMMIT: \(outcomes)")
        print("migration kill test (seed \(seed)): \(outcomes)")
    }
}
