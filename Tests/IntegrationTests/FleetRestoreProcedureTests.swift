import Foundation
import NATS
import OfferTrackDomain
import Posix
import SQLite
import TestSupport
import Testing

/// docs/backup-and-restore.md, "Restoring in a fleet", for a central journal, on the bring-up of docs/fleet.md (a
/// real nats-server, an edge `--forward`, two centrals `--consume --partitions`): the central restored from its
/// backup lacks what it consumed since, an erasure among it; `offertrack verify --edge` names those records and the
/// `offertrack forward --from-seq N` that sends them again; the erasure's line as first sent, ingested by the
/// restored central, renames there what it held of the person from before the backup. Then every record the edge
/// acknowledged is in one central journal once, under the edge's names. The one departure from production: the
/// stream is created beforehand by the test with a 2-second duplicates window instead of the daemons' 2 minutes,
/// so that "once the window has passed" is seconds.
@Suite(.serialized) struct FleetRestoreProcedureTests {
    static let duplicatesWindowMilliseconds: Int64 = 2_000

    /// The `user` of each of `ids` in the journal at `path` ("" for one it does not hold).
    static func users(of path: String, ids: [String]) throws -> [String] {
        let connection = try Connection(path: path, mode: .readOnly)
        return try ids.map { id in
            try connection.scalarText("SELECT user FROM records WHERE id = '\(id)'") ?? ""
        }
    }

    @Test func aCentralRestoredFromItsBackupGetsItsMissingRecordsBackFromTheEdge() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        let operatorClient = try JetStreamClient(servers: [server.url], name: "operator")
        try operatorClient.addStream(
            StreamConfiguration(
                name: "OFFERTRACK", subjects: ["offertrack.records.>"], replicas: 1, maxBytes: 256 << 20,
                duplicatesWindowMilliseconds: Self.duplicatesWindowMilliseconds,
                description: "offertrack fleet stream; partitions-total=4"))
        guard let (centrals, edge) = try TestFleet.twoCentralsAndAnEdge(server) else { return }
        let first = FleetRecords.simulated(users: 100, seed: 40)
        let client = try LineClient(path: edge.socketPath)
        #expect(client.exchange(first).allSatisfy { $0.status == "accepted" })
        // A person of partition 0 (central a's) with a record before the backup and one after it.
        let person = (0...).lazy.map { "person-\($0)" }.first { Partition.of(user: $0, total: 4) == 0 } ?? ""
        let personIDs = ["forget-1", "forget-2"]
        let personRecords = [
            TestRecords.capabilities(id: personIDs[0], user: person),
            TestRecords.presented(id: personIDs[1], user: person),
        ]
        #expect(client.exchange([personRecords[0]]).allSatisfy { $0.status == "accepted" })
        #expect(try eventually(30) { try TestFleet.centralLines(centrals).count >= first.count + 1 })

        // Central a's nightly backup, then more traffic that both centrals consume.
        let a = centrals[0]
        let backup = a.directory.file("offertrack-2026-11-28T004500Z.db")
        #expect(try CLI.run(["backup", "--db", a.databasePath, "--to", backup]).status == 0)
        let second = FleetRecords.simulated(users: 100, seed: 41)
        #expect(client.exchange(second).allSatisfy { $0.status == "accepted" })
        #expect(client.exchange([personRecords[1]]).allSatisfy { $0.status == "accepted" })
        let all = first + second
        #expect(try eventually(30) { try TestFleet.centralLines(centrals).count >= all.count + 2 })
        // The person asks to be forgotten, through the edge; central a renames their records.
        let erased = try CLI.run(["erase", "--user", person, "--ticket", "DSR-7", "--socket", edge.socketPath])
        #expect(erased.status == 0, "\(erased.output)")
        let name = erased.output.split(separator: "\n").last.map(String.init) ?? ""
        #expect(try eventually(30) { try Self.users(of: a.databasePath, ids: personIDs) == [name, name] })
        let heldByA = try JournalInspector.count(of: a.databasePath)
        let heldByB = try JournalInspector.count(of: centrals[1].databasePath)

        // Steps 1 and 2 on central a's host: stopped, its journal moved aside, the backup in its place, started.
        a.signal(Signals.terminate)
        #expect(a.waitExit() == 0)
        let lib = a.directory.path
        let moved = try OperatorShell.run(
            "mkdir \(lib)/damaged && mv \(lib)/offertrack.db* \(lib)/damaged/ && "
                + "install -m 0640 \(backup) \(lib)/offertrack.db")
        #expect(moved.status == 0, "\(moved.output)")
        a.notify.reset()
        let restored = try DaemonProcess(
            in: a.directory,
            arguments: ["--consume", server.url, "--partitions", "0-1"] + TestFleet.common, notify: a.notify)
        guard restored.waitReady() else { return }
        let running = [restored, centrals[1]]
        defer { DaemonProcess.terminateCleanly(running + [edge]) }
        let lacking = heldByA - (try JournalInspector.count(of: restored.databasePath))
        #expect(lacking > 0, "the backup holds everything: the second batch has no record of partitions 0-1")

        // verify --edge, with every central journal, names what the restored central lacks and the forward.
        let databases = ["--db", restored.databasePath, "--db", centrals[1].databasePath]
        let check = try CLI.run(["verify", "--edge", edge.databasePath] + databases)
        #expect(check.status == 65, "\(check.output)")
        #expect(check.output.contains("\(lacking) in no central journal"), "\(check.output)")
        let command = "offertrack forward --db \(edge.databasePath) --from-seq "
        let seq = check.output.range(of: command).map { check.output[$0.upperBound...].prefix { $0.isNumber } }
        let fromSeq = try #require(seq.map(String.init), "no forward command in \(check.output)")
        #expect(check.output.contains("\(command)\(fromSeq) --servers URL"), "\(check.output)")

        // Once the duplicates window has passed since they were published, the forward the check printed.
        Thread.sleep(forTimeInterval: Double(Self.duplicatesWindowMilliseconds) / 1000 + 1)
        let forward = try CLI.run([
            "forward", "--db", edge.databasePath, "--from-seq", fromSeq, "--servers", server.url,
        ])
        #expect(forward.status == 0, "\(forward.output)")
        #expect(try eventually(30) { try TestFleet.centralLines(running).count >= all.count + 3 })
        // The forward brought the erasure back renamed, as the edge stores it: it cannot tell central a whom it
        // forgets, and the record central a held from before the backup still names the person.
        #expect(try Self.users(of: restored.databasePath, ids: personIDs) == [person, name])
        let unrenamed = try CLI.run(["verify", "--edge", edge.databasePath] + databases)
        #expect(unrenamed.status == 65, "\(unrenamed.output)")
        #expect(
            unrenamed.output.contains("1 renamed by an erasure at the edge and not in the central journals"),
            "\(unrenamed.output)")
        // Step 3 for a central: the erasure's line as first sent (the edge's `explain` gives its ts) to the restored
        // central with `offertrack ingest`: a duplicate, and the person has the edge's name there too.
        let explained = try CLI.output(["explain", "--db", edge.databasePath, "--user", name, "--format", "json"])
        let erasureID = String(name.dropFirst("erased:".count))
        let ts = explained.range(of: #""erasure":\{"id":"\#(erasureID)","ts":"[^"]*""#, options: .regularExpression)
            .map { String(explained[$0].dropLast().split(separator: "\"").last ?? "") }
        let line =
            #"{"type":"erasure","id":"\#(erasureID)","ts":"\#(ts ?? "")","user":"\#(person)","ticket":"DSR-7"}"#
        let file = a.directory.file("erasures.ndjson")
        try (line + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let sent = try CLI.run(["ingest", file, "--socket", restored.socketPath])
        #expect(sent.status == 0 && sent.output.contains("duplicate 1\n"), "\(line): \(sent.output)")
        #expect(try Self.users(of: restored.databasePath, ids: personIDs) == [name, name])
        let path = restored.databasePath
        #expect(
            eventually(60) { !FileBytes.contain(path, person) && !FileBytes.contain(path + "-wal", person) },
            "the person is still in the restored central journal's files")
        let held = try TestFleet.centralLines(running).filter { !$0.contains("forget-") && !$0.contains(erasureID) }
        #expect(held.count == all.count && held.sorted() == all.sorted(), "\(held.count) of \(all.count)")
        #expect(try JournalInspector.count(of: restored.databasePath) == heldByA)
        #expect(try JournalInspector.count(of: centrals[1].databasePath) == heldByB, "b answers duplicates")
        let again = try CLI.run(["verify", "--edge", edge.databasePath] + databases)
        #expect(again.status == 0, "\(again.output)")
    }

    /// docs/fleet.md, "Moving a central journal to another host": central a stopped with SIGTERM (no `-wal` left),
    /// its journal copied with `backup` to another host's directory and verified, and a daemon started there on the
    /// copy with the same partitions. What the edge forwarded while a was stopped, and after, arrives there: every
    /// acknowledged record in one central journal once, and `verify --edge` passes.
    @Test func aCentralJournalMovedToAnotherHostGoesOnWhereItStopped() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        guard let (centrals, edge) = try TestFleet.twoCentralsAndAnEdge(server) else { return }
        let client = try LineClient(path: edge.socketPath)
        let first = FleetRecords.simulated(users: 100, seed: 50)
        #expect(client.exchange(first).allSatisfy { $0.status == "accepted" })
        #expect(try eventually(30) { try TestFleet.centralLines(centrals).count >= first.count })

        let a = centrals[0]
        a.signal(Signals.terminate)
        #expect(a.waitExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: a.databasePath + "-wal"), "a clean stop leaves no WAL")
        // The edge goes on forwarding while a is stopped: partitions 0-1 wait in the stream.
        let second = FleetRecords.simulated(users: 100, seed: 51)
        #expect(client.exchange(second).allSatisfy { $0.status == "accepted" })

        let newHost = ScratchDirectory("ot-central-a-moved")
        let copy = newHost.file("offertrack.db")
        #expect(try CLI.run(["backup", "--db", a.databasePath, "--to", copy]).status == 0)
        #expect(try CLI.run(["verify", "--db", copy]).status == 0)
        let moved = try DaemonProcess(
            in: newHost, arguments: ["--consume", server.url, "--partitions", "0-1"] + TestFleet.common)
        let running = [moved, centrals[1]]
        defer { DaemonProcess.terminateCleanly(running + [edge]) }
        guard moved.waitReady() else { return }
        let third = FleetRecords.simulated(users: 100, seed: 52)
        #expect(client.exchange(third).allSatisfy { $0.status == "accepted" })
        let all = first + second + third
        #expect(try eventually(30) { try TestFleet.centralLines(running).count >= all.count })
        let held = try TestFleet.centralLines(running)
        #expect(held.count == all.count && held.sorted() == all.sorted(), "\(held.count) of \(all.count)")
        let check = try CLI.run(
            ["verify", "--edge", edge.databasePath, "--db", moved.databasePath, "--db", centrals[1].databasePath])
        #expect(check.status == 0, "\(check.output)")
    }
}
