import Foundation
import JournalStore
import Posix
import SQLite
import TestSupport
import Testing

/// docs/upgrade.md, "Upgrading" and "Rolling back", run step by step. There is one build here, so what stands in
/// for what: the old release's journal is `Fixtures/schema7/journal.db`, which the schema-7 offertrackd made (the
/// old daemon is not run); the new release is this build. For the rollback, an older binary meeting a journal the
/// newer release migrated is this build meeting a copy of its own migrated journal whose `PRAGMA user_version` (where
/// the schema version is kept) is one past this build's: the same check refuses both.
@Suite(.serialized) struct UpgradeProcedureTests {
    static func schemaVersion(_ path: String) throws -> Int64? {
        try Connection(path: path, mode: .readOnly).scalarInt("PRAGMA user_version")
    }

    static func sh(_ command: String) throws -> Shell.Outcome {
        try Shell.run("/bin/sh", ["-c", command], environment: ["PATH": "/usr/bin:/bin"])
    }

    @Test func upgradingMigratesAndRollingBackRestoresTheBackupTakenFirst() throws {
        let directory = ScratchDirectory("ot-upgrade")
        let rules = Schema7Fixture.rules
        let db = try Schema7Fixture.copy(in: directory)
        let records = try JournalInspector.count(of: db)
        #expect(try Self.schemaVersion(db) == 7)
        let current = Schema.currentVersion

        // 2. Back up first (the old release's CLI would; this build's backup copies a journal of any schema).
        let backups = directory.file("backups")
        try FileManager.default.createDirectory(atPath: backups, withIntermediateDirectories: true)
        let backup = "\(backups)/before-0.3.0.db"
        let backedUp = try CLI.run(["backup", "--db", db, "--to", backup])
        #expect(backedUp.status == 0 && backedUp.output.contains("\(records) records"), "\(backedUp.output)")
        #expect(try Self.schemaVersion(backup) == 7)

        // 3. The new daemon on the old journal: it migrates, then listens.
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules])
        guard daemon.waitReady(timeout: 40) else { return }
        // The daemon logs that it listens right after READY=1: that line may come a moment after the notification.
        #expect(daemon.waitForLog(containing: "listening on "), "\(daemon.stderr)")
        // Only the step to schema 8 (the per-user index rebuilt) says so in the log; the later steps are quick and
        // silent. Then the daemon listens.
        let log = daemon.stderr.split(separator: "\n").map { String($0.drop { $0 != ":" }.dropFirst(2)) }
        let migrating = log.firstIndex { $0.hasPrefix("migrating the journal to schema 8 ") }
        let migrated = log.firstIndex { $0.hasPrefix("migrated the journal to schema 8 in ") }
        let listening = log.firstIndex { $0.hasPrefix("listening on ") }
        #expect(migrating != nil && migrated != nil && listening != nil, "\(daemon.stderr)")
        if let migrating, let migrated, let listening { #expect(migrating < migrated && migrated < listening) }
        #expect(try Self.schemaVersion(db) == current)

        // 4. Check: both --version name the journal schema, and status shows it with the daemon up.
        for binary in [Binaries.cli, Binaries.daemon] {
            let version = try Shell.run(binary, ["--version"])
            #expect(version.status == 0 && version.output.contains("(journal schema \(current))"), "\(version.output)")
        }
        let json = try CLI.output(["status", "--db", db, "--socket", daemon.socketPath, "--format", "json"])
        #expect(json.contains(#""schemaVersion":\#(current),"#) && json.contains(#""daemon":"up""#), "\(json)")
        let text = try CLI.output(["status", "--db", db, "--socket", daemon.socketPath])
        #expect(text.hasPrefix("daemon: up "), "\(text)")
        #expect(try JournalInspector.count(of: db) == records)
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)

        // Rolling back: an older binary refuses the migrated journal (the stand-in: this build and a journal one
        // schema newer), the daemon with 73 and the CLI with 69, each naming both schema versions.
        let newer = directory.file("newer.db")
        try Connection(path: db, mode: .readOnly).backup(into: Connection(path: newer, mode: .readWriteCreate))
        try Connection(path: newer, mode: .readWrite).execute("PRAGMA user_version = \(current + 1)")
        let refusedDaemon = try DaemonProcess(
            in: directory, arguments: ["--rules", rules], notify: daemon.notify, databasePath: newer)
        #expect(refusedDaemon.waitExit() == 73, "\(refusedDaemon.stderr)")
        #expect(
            refusedDaemon.stderr.contains("\(current + 1)") && refusedDaemon.stderr.contains("(\(current))"),
            "\(refusedDaemon.stderr)")
        for command in [["verify"], ["report", "--rules", rules]] {
            let refused = try CLI.run(command + ["--db", newer])
            #expect(refused.status == 69, "\(command): \(refused.output)")
            #expect(
                refused.output.contains("schema \(current + 1)") && refused.output.contains("(\(current))"),
                "\(command): \(refused.output)")
        }
        #expect(try Self.schemaVersion(newer) == current + 1, "the refusal changed the journal")

        // 2. The backup of step 2 restored as in backup-and-restore.md, step 2: what the old binary reads again.
        let moved = try Self.sh(
            "mkdir \(directory.path)/damaged && mv \(db)* \(directory.path)/damaged/ && install -m 0640 \(backup) \(db)"
        )
        #expect(moved.status == 0, "\(moved.output)")
        #expect(try Self.schemaVersion(db) == 7)
        #expect(try JournalInspector.count(of: db) == records)
        #expect(try Connection(path: db, mode: .readOnly).scalarText("PRAGMA integrity_check") == "ok")
    }
}
