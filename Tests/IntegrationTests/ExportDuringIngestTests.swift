import Foundation
import OfferTrackDomain
import Posix
import Simulator
import Synchronization
import TestSupport
import Testing

/// Issue 13 item 1: the nightly export computes a day in a read transaction and takes the write lock only to
/// store it, so a busy day's export holds no record back: 8 clients streaming meanwhile get every answer, none
/// `storage_unavailable`, none waiting for the export, and the files equal those of the same records exported
/// from an idle journal.
@Suite struct ExportDuringIngestTests {
    static func export(_ database: String, rules: String, to folder: String) throws -> (csv: Data, seconds: Double) {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let started = Date()
        let outcome = try Shell.run(
            Binaries.cli, ["export", "--date", "2026-11-01", "--out", folder, "--db", database, "--rules", rules])
        let seconds = Date().timeIntervalSince(started)
        #expect(outcome.status == 0, "\(outcome.output)")
        let csv = try Data(contentsOf: URL(fileURLWithPath: folder + "/commissions-2026-11-01.csv"))
        return (csv, seconds)
    }

    @Test func exportingABusyDayWhileEightClientsStreamHoldsNoRecordBack() throws {
        let busyDay = Array(WorkloadSimulator(users: 40_000, seed: 21, days: 1).lines)
        // Records of later days only (and other users), so that the exported day is the same with or without them.
        let later = Array(
            WorkloadSimulator(
                users: 40_000, seed: 22, start: WorkloadSimulator.defaultStart + 9 * Timestamp.millisecondsPerDay,
                days: 1
            ).lines)

        // The reference: the busy day alone, exported from a journal nobody writes to.
        let idle = ScratchDirectory()
        let idleRules = idle.file("rules.json")
        try IngestedDaemon.rules.write(toFile: idleRules, atomically: true, encoding: .utf8)
        guard let twin = try IngestedDaemon.start(in: idle, rules: idleRules, lines: busyDay) else { return }
        twin.signal(Signals.terminate)
        #expect(twin.waitExit() == 0)
        let reference = try Self.export(twin.databasePath, rules: idleRules, to: idle.file("out"))
        #expect(reference.csv.count > 10_000, "the busy day has \(reference.csv.count) bytes of rows: too few")

        let directory = ScratchDirectory()
        let rules = directory.file("rules.json")
        try IngestedDaemon.rules.write(toFile: rules, atomically: true, encoding: .utf8)
        guard let daemon = try IngestedDaemon.start(in: directory, rules: rules, lines: busyDay) else { return }
        let clients = 8
        let stop = Atomic<Bool>(false)
        let finished = Atomic<Int>(0)
        // Every exchange of 50 records: when it started and ended (seconds since the reference date), and its
        // answers' statuses and codes.
        let exchanges = Mutex<[(start: Double, end: Double)]>([])
        let answers = Mutex<[String: Int]>([:])
        let socketPath = daemon.socketPath
        for client in 0..<clients {
            let mine = later.enumerated().filter { $0.offset % clients == client }.map { $0.element }
            Thread {
                defer { finished.add(1, ordering: .sequentiallyConsistent) }
                guard let connection = try? LineClient(path: socketPath) else { return }
                var start = 0
                while start < mine.count && !stop.load(ordering: .sequentiallyConsistent) {
                    let began = Date().timeIntervalSinceReferenceDate
                    let got = connection.exchange(Array(mine[start..<min(start + 50, mine.count)]))
                    let ended = Date().timeIntervalSinceReferenceDate
                    exchanges.withLock { $0.append((began, ended)) }
                    answers.withLock { counts in
                        for answer in got { counts[answer.code ?? answer.status, default: 0] += 1 }
                    }
                    start += 50
                }
            }.start()
        }
        while exchanges.withLock({ $0.count }) < clients * 4 { usleep(5000) }
        let exportStarted = Date().timeIntervalSinceReferenceDate
        let during = try Self.export(daemon.databasePath, rules: rules, to: directory.file("out"))
        let exportEnded = Date().timeIntervalSinceReferenceDate
        stop.store(true, ordering: .sequentiallyConsistent)
        while finished.load(ordering: .sequentiallyConsistent) < clients { usleep(5000) }
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)

        let overlapping = exchanges.withLock { all in all.filter { $0.end > exportStarted && $0.start < exportEnded } }
        let longest = overlapping.map { $0.end - $0.start }.max() ?? 0
        let counts = answers.withLock { $0 }
        print(
            "export of a busy day during ingest: \(during.seconds) s (idle: \(reference.seconds) s); "
                + "\(overlapping.count) exchanges of 50 records meanwhile, the longest \(longest) s; answers \(counts)")
        #expect(counts["storage_unavailable"] == nil, "\(counts)")
        #expect(counts.keys.allSatisfy { $0 == "accepted" || $0 == "duplicate" }, "\(counts)")
        // The stream went on during the export, and no exchange waited for most of it.
        #expect(overlapping.count >= clients, "only \(overlapping.count) exchanges overlapped the export")
        #expect(longest < (exportEnded - exportStarted) / 2, "an exchange waited \(longest) s of the export's")
        #expect(during.csv == reference.csv, "the day's rows differ from the idle journal's export")
    }
}
