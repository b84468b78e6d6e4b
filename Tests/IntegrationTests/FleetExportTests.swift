import Foundation
import OfferTrackDomain
import Posix
import SQLite
import Simulator
import TestSupport
import Testing

/// A fleet export that cannot strand the fleet (SPEC section 10): an edge's journal publishes nothing, and a run
/// that stops after some central journals published the day is completed by running it again, and the file is
/// then the one a single daemon writes.
@Suite(.serialized) struct FleetExportTests {
    @Test func anExportStoppedByABusyJournalIsCompletedByRunningItAgain() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        let rulesPath = directory.file("rules.json")
        try TestFleet.rules.write(toFile: rulesPath, atomically: true, encoding: .utf8)
        guard let (centrals, edge) = try TestFleet.twoCentralsAndAnEdge(server, extra: ["--rules", rulesPath]) else {
            return
        }
        let lines = Array(
            WorkloadSimulator(users: 200, seed: 23).filter { !$0.isDuplicate && $0.record.type != .erasure }.map(\.line)
        )
        #expect(try LineClient(path: edge.socketPath).exchange(lines).allSatisfy { $0.status == "accepted" })
        #expect(
            try eventually { try TestFleet.centralLines(centrals).count >= lines.count })
        let day = "2026-11-02"
        let out = directory.file("out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        // An edge's journal keeps no attribution: publishing from it is refused, alone or among the centrals, and
        // nothing is written or stored.
        for journals in [[edge.databasePath], [edge.databasePath] + centrals.map(\.databasePath)] {
            let databases = journals.flatMap { ["--db", $0] }
            for command in [
                ["export", "--rules", rulesPath, "--date", day, "--out", out],
                ["payouts", "--rules", rulesPath, "--month", "2026-11", "--out", out],
            ] {
                let refused = try Shell.run(Binaries.cli, command + databases)
                #expect(refused.status == 65 && refused.output.contains("is an edge journal"), "\(refused.output)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).isEmpty)
        #expect(
            try Connection(path: edge.databasePath, mode: .readOnly).scalarInt("SELECT count(*) FROM published_days")
                == 0)
        let export =
            ["export", "--rules", rulesPath, "--date", day, "--out", out]
            + centrals.flatMap {
                ["--db", $0.databasePath]
            }
        // The second journal is busy past the export's busy timeout: the first publishes, the run stops.
        let holder = try Connection(path: centrals[1].databasePath, mode: .readWriteCreate)
        try holder.execute("BEGIN IMMEDIATE")
        let stopped = try Shell.run(Binaries.cli, export)
        try holder.execute("ROLLBACK")
        #expect(stopped.status == 75, "\(stopped.output)")
        #expect(
            stopped.output.contains("published it and keep it")
                && stopped.output.contains("run the same export again"), "\(stopped.output)")
        let published = try centrals.map {
            try Connection(path: $0.databasePath, mode: .readOnly).scalarInt(
                "SELECT count(*) FROM published_days WHERE day = '\(day)'")
        }
        #expect(published == [1, 0])
        // Run again: the second journal publishes, the first contributes what it published.
        let completed = try Shell.run(Binaries.cli, export)
        #expect(completed.status == 0, "\(completed.output)")
        // The day equals a single daemon's, and rewriting it gives the same bytes.
        try FleetComparison.withASingleDaemon(
            centrals: centrals, lines: lines, rules: rulesPath, in: directory)
        DaemonProcess.terminateCleanly(centrals + [edge])
    }
}
