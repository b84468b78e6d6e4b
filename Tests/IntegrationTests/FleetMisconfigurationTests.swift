import Foundation
import NATS
import OfferTrackDomain
import Posix
import SQLite
import TestSupport
import Testing

/// SPEC 10, "Misconfiguration never pays twice": edges, central journals and the stream agree on P and the
/// stream's name or the daemon that finds a difference refuses to start (exit 78, naming both values); a central
/// journal never journals a record of another partition; `report`, `explain` and `verify` refuse a set of
/// journals that repeats a journal or a partition or mixes P (exit 65).
@Suite(.serialized) struct FleetMisconfigurationTests {
    /// Runs `offertrackd` to its exit (a refusal) with `arguments`.
    static func daemonRun(_ arguments: [String], in directory: ScratchDirectory) throws -> Shell.Outcome {
        try Shell.run(Binaries.daemon, ["--socket", directory.file("refused.sock")] + arguments)
    }

    @Test func anEdgeOrCentralWithAnotherPOrStreamRefusesToStart() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        let common = ["--stream-replicas", "1"]
        // The first central creates the stream for P = 4.
        let central = try DaemonProcess(
            in: ScratchDirectory("ot-central"),
            arguments: ["--consume", server.url, "--partitions", "0-3", "--partitions-total", "4"] + common)
        guard central.waitReady() else { return }
        #expect(try server.waitForStream())
        #expect(
            try JetStreamClient(servers: [server.url], name: "probe").streamInfo("OFFERTRACK")?.description.contains(
                "partitions-total=4") == true)
        // A new edge and a new central with P = 8: refused by the stream, naming both values.
        for mode in [["--forward", server.url], ["--consume", server.url, "--partitions", "4-7"]] {
            let refused = try Self.daemonRun(
                mode + common + ["--partitions-total", "8", "--db", directory.file("new-\(mode[0]).db")], in: directory)
            #expect(refused.status == 78, "\(refused.output)")
            #expect(
                refused.output.contains("--partitions-total 4") && refused.output.contains("--partitions-total 8"),
                "\(refused.output)")
        }
        // An edge journal keeps the P and stream it was first started with.
        let edgeDirectory = ScratchDirectory("ot-edge")
        let edge = try DaemonProcess(
            in: edgeDirectory, arguments: ["--forward", server.url, "--partitions-total", "4"] + common)
        guard edge.waitReady() else { return }
        edge.signal(Signals.terminate)
        #expect(edge.waitExit() == 0)
        for other in [["--partitions-total", "8"], ["--partitions-total", "4", "--stream", "OTHER"]] {
            let refused = try Self.daemonRun(
                ["--forward", server.url, "--db", edge.databasePath] + common + other, in: directory)
            #expect(refused.status == 78, "\(refused.output)")
            #expect(
                refused.output.contains(
                    "this journal belongs to the fleet of stream OFFERTRACK with "
                        + "--partitions-total 4"), "\(refused.output)")
        }
        // So does `offertrack forward`, which takes the journal's P and stream when none is given.
        let forward = try Shell.run(
            Binaries.cli,
            [
                "forward", "--db", edge.databasePath, "--from-seq", "1", "--servers", server.url, "--partitions-total",
                "8",
            ])
        #expect(forward.status == 78 && forward.output.contains("--partitions-total 4"), "\(forward.output)")
        central.signal(Signals.terminate)
        #expect(central.waitExit() == 0)
    }

    @Test func aRecordOfAnotherPartitionIsCountedAndNeverJournaled() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        let metrics = directory.file("metrics.sock")
        let central = try DaemonProcess(
            in: ScratchDirectory("ot-central"),
            arguments: [
                "--consume", server.url, "--partitions", "0", "--partitions-total", "4", "--stream-replicas", "1",
                "--metrics-listen", metrics,
            ])
        guard central.waitReady() else { return }
        #expect(try server.waitForStream())
        // Published by hand on partition 0's subject: a record of partition 1's user, then one of partition 0's.
        let client = try JetStreamClient(servers: [server.url], name: "injector")
        let stranger = TestRecords.capabilities(id: "wrong-1", user: FleetRecords.user(in: 1, of: 4))
        let own = TestRecords.capabilities(id: "own-1", user: FleetRecords.user(in: 0, of: 4))
        for (line, id) in [(stranger, "wrong-1"), (own, "own-1")] {
            try client.publishAsync(subject: Partition.subject(0), data: Array(line.utf8), messageID: id)
        }
        try client.waitForPublishes(timeoutMilliseconds: 5_000)
        let deadline = Date().addingTimeInterval(20)
        var held: [String] = []
        while Date() < deadline {
            held = try JournalInspector.lines(of: central.databasePath)
            if !held.isEmpty { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(held == [own], "\(held)")
        let scrape = try Curl.run(["--unix-socket", metrics, "http://localhost/metrics"]).output
        #expect(MetricsScrape.value(scrape, "offertrack_stream_wrong_partition_total") == "1", "\(scrape)")
        #expect(MetricsScrape.value(scrape, "offertrack_stream_up") == "1")
        #expect(central.stderr.contains("record wrong-1 on offertrack.records.0 belongs to partition 1 of 4"))
        #expect(central.notify.waitFor { $0.contains("1 of other partitions refused") } != nil)
        // `offertrack status` shows it (the daemon records it within a second).
        var status = ""
        for _ in 0..<40 {
            status = try FleetStatus.json(central)
            if status.contains(#""wrongPartition":1"#) { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(status.contains(#""up":true,"problem":null,"invalid":0,"conflicts":0,"wrongPartition":1"#), "\(status)")
        central.signal(Signals.terminate)
        #expect(central.waitExit() == 0)
    }

    @Test func journalsThatRepeatAJournalOrAPartitionOrMixPAreRefused() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        // Central journals made by their daemons: 0-1 and 2-3 of 4, 1-2 of 4 (in the "OTHER" stream), 0-7 of 8.
        var journals: [String: String] = [:]
        var directories: [ScratchDirectory] = []
        for (label, arguments) in [
            ("a", ["--partitions", "0-1", "--partitions-total", "4"]),
            ("b", ["--partitions", "2-3", "--partitions-total", "4"]),
            ("c", ["--partitions", "1-2", "--partitions-total", "4", "--stream", "OTHER"]),
            ("d", ["--partitions", "0-7", "--partitions-total", "8", "--stream", "EIGHT"]),
        ] {
            directories.append(ScratchDirectory("ot-\(label)"))
            let daemon = try DaemonProcess(
                in: directories[directories.count - 1],
                arguments: ["--consume", server.url, "--stream-replicas", "1"] + arguments)
            guard daemon.waitReady() else { return }
            daemon.signal(Signals.terminate)
            #expect(daemon.waitExit() == 0)
            journals[label] = daemon.databasePath
        }
        let plainDirectory = ScratchDirectory("ot-plain")
        let plain = try DaemonProcess(in: plainDirectory)
        guard plain.waitReady() else { return }
        plain.signal(Signals.terminate)
        #expect(plain.waitExit() == 0)
        func db(_ labels: String...) -> [String] {
            labels.flatMap { ["--db", $0 == "p" ? plain.databasePath : journals[$0] ?? ""] }
        }
        let commands = [
            ["report", "--format", "json"], ["explain", "--user", "u-1"], ["verify"],
        ]
        for command in commands {
            for (set, why) in [
                (db("a", "a"), "are the same journal"), (db("p", "p"), "are the same journal"),
                (db("a", "b", "c"), "is in both"), (db("a", "d"), "fleets of different P"),
            ] {
                let refused = try Shell.run(Binaries.cli, command + set)
                #expect(refused.status == 65 && refused.output.contains(why), "\(command) \(set): \(refused.output)")
            }
            // One fleet's journals, each once, are read as one.
            let accepted = try Shell.run(Binaries.cli, command + db("a", "b"))
            #expect(accepted.status != 65, "\(command): \(accepted.output)")
        }
    }
}
