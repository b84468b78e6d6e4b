import Foundation
import OfferTrackDomain
import Posix
import SQLite
import Simulator
import TestSupport
import Testing

extension UnderAttack {
    /// A damaged journal, a second daemon, commands of another schema version: the journal is never made worse.
    @Suite struct JournalSafetyTests {
        /// Starting on a damaged journal is exit 65 (never retried by the unit), telling to restore a backup.
        static func expectCorruptionRefusal(_ path: String, in directory: ScratchDirectory) throws {
            let daemon = try DaemonProcess(in: directory, notify: NotifyListener(in: ScratchDirectory()))
            StartupRefusal.expect(daemon, code: 65, mentioning: "corrupt")
            #expect(daemon.stderr.contains("restore the latest backup"), "stderr: \(daemon.stderr)")
        }

        @Test func aPageOverwrittenWithGarbageIsFoundAtStart() throws {
            let directory = ScratchDirectory()
            let path = try JournalDamage.journal(in: directory)
            let page = try JournalDamage.rootPage(of: "by_user", in: path)
            #expect(page > 1)
            try JournalDamage.overwrite(path, offset: UInt64(page - 1) * 4096 + 8, count: 4000)
            try Self.expectCorruptionRefusal(path, in: directory)
        }

        @Test func aTruncatedJournalIsFoundAtStart() throws {
            let directory = ScratchDirectory()
            let path = try JournalDamage.journal(in: directory)
            let size = try #require(CurrentProcess.fileSize(path))
            #expect(truncate(path, off_t(size / 2)) == 0)
            try Self.expectCorruptionRefusal(path, in: directory)
        }

        @Test func aGarbageHeaderIsFoundAtStart() throws {
            let directory = ScratchDirectory()
            let path = try JournalDamage.journal(in: directory, count: 10)
            try JournalDamage.overwrite(path, offset: 0, count: 100)
            try Self.expectCorruptionRefusal(path, in: directory)
        }

        @Test func theServiceUnitDoesNotRestartOnCorruption() throws {
            let unit = try String(contentsOfFile: Repository.file("systemd/offertrackd.service"), encoding: .utf8)
            let line = unit.split(separator: "\n").first { $0.hasPrefix("RestartPreventExitStatus=") }
            let codes = line.map { $0.dropFirst("RestartPreventExitStatus=".count).split(separator: " ") } ?? []
            #expect(codes.contains("65"), "\(String(describing: line))")
        }

        /// Damage found while running: not retried as if it would pass, nothing more acknowledged, and said so.
        @Test func corruptionFoundWhileRunningStopsAcknowledgingAndSaysSo() throws {
            let directory = ScratchDirectory()
            let path = try JournalDamage.journal(in: directory)
            let daemon = try DaemonProcess(in: directory)
            guard daemon.waitReady() else { return }
            // The index of ids is not read at start (its pages are not cached): the next new id reads it.
            let page = try JournalDamage.rootPage(of: "sqlite_autoindex_records_1", in: path)
            try JournalDamage.overwrite(path, offset: UInt64(page - 1) * 4096, count: 4096)
            let client = try LineClient(path: daemon.socketPath)
            let first = client.exchange(TestRecords.stream(prefix: "after", count: 50))
            #expect(first.count == 50)
            #expect(first.allSatisfy { $0.code == "storage_unavailable" }, "\(first.prefix(3))")
            #expect(
                daemon.notify.waitFor(timeout: 5) { $0.contains("STATUS=") && $0.contains("JOURNAL CORRUPT") } != nil,
                "STATUS= does not say the journal is corrupt: \(daemon.notify.messages.suffix(3))")
            // Later records are refused too, without another attempt at committing.
            let second = client.exchange(TestRecords.stream(prefix: "later", count: 50))
            #expect(second.count == 50 && second.allSatisfy { $0.code == "storage_unavailable" })
            let log = daemon.stderr
            #expect(log.contains("JOURNAL CORRUPT") && log.contains("restore the latest backup"), "\(log)")
            #expect(log.components(separatedBy: "JOURNAL CORRUPT").count == 2, "reported more than once: \(log)")
            #expect(!log.contains("commits again"), "\(log)")
            daemon.signal(Signals.terminate)
            #expect(daemon.waitExit() == 0)
        }

        /// A second daemon on the same journal (another socket) leaves it alone: it sees the lock first.
        @Test func aSecondDaemonOnTheSameJournalExits69WithoutTouchingIt() throws {
            let directory = ScratchDirectory()
            let first = try DaemonProcess(in: directory)
            guard first.waitReady() else { return }
            let before = try JournalSafetyTests.derivedWindow(first.databasePath)
            let otherRules = directory.file("other.json")
            try #"{"currency":"USD","attributionWindowHours":1,"eligibilityFreshnessHours":1,"rules":[]}"#
                .write(toFile: otherRules, atomically: true, encoding: .utf8)
            let otherDirectory = ScratchDirectory()
            let second = try DaemonProcess(
                in: otherDirectory, arguments: ["--rules", otherRules], databasePath: first.databasePath)
            StartupRefusal.expect(second, code: 69, mentioning: "another offertrackd")
            #expect(try JournalSafetyTests.derivedWindow(first.databasePath) == before)
            let answer = try LineClient(path: first.socketPath).exchange([TestRecords.capabilities(id: "still")])
            #expect(answer.first?.status == "accepted")
            first.signal(Signals.terminate)
            #expect(first.waitExit() == 0)
        }

        /// The same socket and journal (the usual mistake): refused before the journal is touched.
        @Test func aSecondDaemonOnTheSameSocketAndJournalLeavesTheDerivedTablesAlone() throws {
            let directory = ScratchDirectory()
            let first = try DaemonProcess(in: directory)
            guard first.waitReady() else { return }
            let before = try JournalSafetyTests.derivedWindow(first.databasePath)
            let otherRules = directory.file("other.json")
            try #"{"currency":"USD","attributionWindowHours":2,"eligibilityFreshnessHours":2,"rules":[]}"#
                .write(toFile: otherRules, atomically: true, encoding: .utf8)
            let second = try DaemonProcess(
                in: directory, arguments: ["--rules", otherRules], notify: NotifyListener(in: ScratchDirectory()))
            StartupRefusal.expect(second, code: 69, mentioning: "another offertrackd")
            #expect(try JournalSafetyTests.derivedWindow(first.databasePath) == before)
            first.signal(Signals.terminate)
            #expect(first.waitExit() == 0)
        }

        static func derivedWindow(_ path: String) throws -> String? {
            let connection = try Connection(path: path, mode: .readOnly)
            return try connection.scalarText("SELECT value FROM meta WHERE key = 'derived_window_ms'")
        }

        /// A journal of schema 1 (as an older offertrackd left it).
        static func version1Journal(in directory: ScratchDirectory) throws -> String {
            let path = directory.file("old.db")
            let connection = try Connection(path: path, mode: .readWriteCreate)
            try connection.execute(
                """
                \(LegacySchema.version1Tables)
                PRAGMA user_version = 1;
                """)
            return path
        }

        static func schemaVersion(_ path: String) throws -> Int64? {
            try Connection(path: path, mode: .readOnly).scalarInt("PRAGMA user_version")
        }

        /// Only the daemon and rebuild migrate: every other command refuses another version, naming both.
        @Test func commandsOtherThanRebuildRefuseAnOlderSchemaWithExit69() throws {
            let directory = ScratchDirectory()
            let path = try Self.version1Journal(in: directory)
            let commands: [[String]] = [
                [
                    "export", "--date", "2026-11-28", "--out", directory.path, "--rules",
                    Repository.file("systemd/rules.example.json"),
                ], ["report"], ["verify"],
            ]
            for command in commands {
                let outcome = try Shell.run(Binaries.cli, command + ["--db", path])
                #expect(outcome.status == 69, "\(command): \(outcome.status) \(outcome.output)")
                #expect(outcome.output.contains("schema 1") && outcome.output.contains("reads "), "\(outcome.output)")
                #expect(try Self.schemaVersion(path) == 1, "\(command) migrated the journal")
            }
            let rebuild = try Shell.run(Binaries.cli, ["rebuild", "--db", path])
            #expect(rebuild.status == 0, "\(rebuild.output)")
            #expect(try Self.schemaVersion(path) != 1)
        }

        /// `rebuild` gives each failure its own code: newer schema 69, corrupt 65, no journal 66.
        @Test func rebuildGivesEachFailureItsOwnExitCode() throws {
            let directory = ScratchDirectory()
            let newer = directory.file("newer.db")
            try Connection(path: newer, mode: .readWriteCreate).execute("PRAGMA user_version = 999")
            let newerOutcome = try Shell.run(Binaries.cli, ["rebuild", "--db", newer])
            #expect(newerOutcome.status == 69, "\(newerOutcome.output)")

            let corrupt = directory.file("corrupt.db")
            try Data(repeating: 0x5a, count: 8192).write(to: URL(fileURLWithPath: corrupt))
            let corruptOutcome = try Shell.run(Binaries.cli, ["rebuild", "--db", corrupt])
            #expect(corruptOutcome.status == 65, "\(corruptOutcome.output)")

            let missingOutcome = try Shell.run(Binaries.cli, ["rebuild", "--db", directory.file("none.db")])
            #expect(missingOutcome.status == 66, "\(missingOutcome.output)")
        }
    }
}
