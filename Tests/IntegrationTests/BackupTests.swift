import Foundation
import OfferTrackDomain
import Posix
import SQLite
import Simulator
import Synchronization
import TestSupport
import Testing

/// `offertrack backup` while the daemon ingests: a consistent snapshot that verifies and reports as the live
/// journal did at that moment, without refusing a single record meanwhile.
@Suite struct BackupTests {
    /// Every record (`seq`, `id`, `line`) of the journal at `path` up to `lastSeq`.
    static func records(_ path: String, upTo lastSeq: Int64) throws -> [String] {
        let connection = try Connection(path: path, mode: .readOnly)
        let statement = try connection.prepare("SELECT seq, id, line FROM records WHERE seq <= ?1 ORDER BY seq")
        try statement.bind(lastSeq, at: 1)
        var rows: [String] = []
        while try statement.step() {
            rows.append("\(statement.int64(0)) \(statement.text(1) ?? "") \(statement.text(2) ?? "")")
        }
        return rows
    }

    static func reports(_ path: String, rules: String) throws -> String {
        var text = ""
        for grouping in ["affiliate", "campaign", "message", "day"] {
            let outcome = try Shell.run(
                Binaries.cli, ["report", "--db", path, "--rules", rules, "--by", grouping, "--format", "json"])
            #expect(outcome.status == 0, "\(outcome.output)")
            text += outcome.output
        }
        return text
    }

    @Test func aBackupTakenWhileEightClientsStreamVerifiesAndReportsAsTheJournalDidThen() throws {
        let directory = ScratchDirectory()
        let rules = directory.file("rules.json")
        try
            #"{"currency":"USD","attributionWindowHours":720,"eligibilityFreshnessHours":24,"rules":[{"affiliateToken":"*","amountMinor":500}]}"#
            .write(toFile: rules, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules])
        guard daemon.waitReady() else { return }
        // No erasures: they rename records journaled before the backup, which the record-by-record comparison
        // below would count as a difference (ErasureEndToEndTests checks that no amount changes).
        let lines = Array(
            WorkloadSimulator(users: 6000, seed: 11, days: 1).filter { $0.record.type != .erasure }.map(\.line))
        let clients = 8
        let acknowledged = Mutex<[String: Int64]>([:])
        let refused = Atomic<Int>(0)
        let finished = Atomic<Int>(0)
        let socketPath = daemon.socketPath
        for client in 0..<clients {
            let mine = lines.enumerated().filter { $0.offset % clients == client }.map(\.element)
            Thread {
                defer { finished.add(1, ordering: .sequentiallyConsistent) }
                guard let connection = try? LineClient(path: socketPath) else { return }
                for start in stride(from: 0, to: mine.count, by: 100) {
                    let answers = connection.exchange(Array(mine[start..<min(start + 100, mine.count)]))
                    acknowledged.withLock { known in
                        for answer in answers where answer.status == "accepted" {
                            if let id = answer.id, let seq = answer.seq { known[id] = seq }
                        }
                    }
                    refused.add(
                        answers.filter { $0.code == "storage_unavailable" }.count, ordering: .sequentiallyConsistent)
                }
            }.start()
        }
        while acknowledged.withLock({ $0.count }) < lines.count / 4 { usleep(5000) }
        let ackedBefore = acknowledged.withLock { $0 }
        let backupPath = directory.file("backup.db")
        let started = Date()
        let backup = try Shell.run(Binaries.cli, ["backup", "--db", daemon.databasePath, "--to", backupPath])
        let seconds = Date().timeIntervalSince(started)
        #expect(backup.status == 0, "\(backup.output)")
        let streamingAfterBackup = finished.load(ordering: .sequentiallyConsistent) < clients
        while finished.load(ordering: .sequentiallyConsistent) < clients { usleep(5000) }
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
        let ackedInAll = acknowledged.withLock { $0.count }
        print("backup: \(seconds) s; acknowledged \(ackedBefore.count) before it, \(ackedInAll) in all")
        // The backup was taken in the middle of the stream, and the stream went on after it.
        #expect(streamingAfterBackup, "the clients had finished before the backup did")
        #expect(ackedInAll > ackedBefore.count)
        #expect(refused.load(ordering: .sequentiallyConsistent) == 0, "the backup blocked ingest")

        let verify = try Shell.run(Binaries.cli, ["verify", "--db", backupPath, "--rules", rules])
        #expect(verify.status == 0, "\(verify.output)")
        let copy = try Connection(path: backupPath, mode: .readOnly)
        let lastSeq = try #require(try copy.scalarInt("SELECT max(seq) FROM records"))
        let backedUp = try copy.scalarInt("SELECT count(*) FROM records")
        // Everything acknowledged before the backup began is in it, with its seq.
        let seqs = Dictionary(
            uniqueKeysWithValues: try Self.records(backupPath, upTo: lastSeq).map { row in
                let parts = row.split(separator: " ", maxSplits: 2)
                return (String(parts[1]), Int64(parts[0]) ?? -1)
            })
        for (id, seq) in ackedBefore { #expect(seqs[id] == seq, "\(id)") }
        // It is exactly the live journal up to its last seq: a snapshot at a commit.
        let live = daemon.databasePath
        #expect(try Self.records(backupPath, upTo: lastSeq) == Self.records(live, upTo: lastSeq))
        #expect(try Self.records(live, upTo: Int64.max).count > backedUp ?? 0)

        // Reports over the backup equal the live journal's at that moment: the live journal cut back to the
        // backup's last seq, its derived tables rebuilt from scratch.
        let then = directory.file("then.db")
        try Connection(path: live, mode: .readOnly).backup(into: Connection(path: then, mode: .readWriteCreate))
        try Connection(path: then, mode: .readWrite).execute("DELETE FROM records WHERE seq > \(lastSeq)")
        let rebuild = try Shell.run(Binaries.cli, ["rebuild", "--db", then, "--rules", rules])
        #expect(rebuild.status == 0, "\(rebuild.output)")
        #expect(try Self.reports(backupPath, rules: rules) == Self.reports(then, rules: rules))
    }

    @Test func aBackupNeverReplacesAFile() throws {
        let directory = ScratchDirectory()
        let daemon = try DaemonProcess(in: directory)
        guard daemon.waitReady() else { return }
        _ = try LineClient(path: daemon.socketPath).exchange(TestRecords.stream(prefix: "b", count: 10))
        let taken = directory.file("taken.db")
        try "precious".write(toFile: taken, atomically: true, encoding: .utf8)
        let outcome = try Shell.run(Binaries.cli, ["backup", "--db", daemon.databasePath, "--to", taken])
        #expect(outcome.status == 73, "\(outcome.output)")
        #expect(try String(contentsOfFile: taken, encoding: .utf8) == "precious")
        let fresh = try Shell.run(
            Binaries.cli, ["backup", "--db", daemon.databasePath, "--to", directory.file("b.db")])
        #expect(fresh.status == 0 && fresh.output.contains("10 records"), "\(fresh.output)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.contains("partial")
        }
        #expect(leftovers.isEmpty, "\(leftovers)")
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
    }
}
