import Fleet
import Foundation
import NATS
import OfferTrackDomain
import Posix
import Simulator
import Synchronization
import TestSupport
import Testing

/// The fleet says when it cannot work and recovers by itself (SPEC section 10): a stream that cannot be placed
/// is reported by every daemon (`STATUS=`, `offertrack status`, `offertrack_stream_up`) while ingest goes on; a
/// central started before the cluster, or whose consumers the server lost, consumes once it can, each record once.
@Suite(.serialized) struct FleetRecoveryTests {
    @Test func aStreamTooLargeForTheServersIsReportedEverywhereAndFlowsOnceTheFlagIsFixed() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory, maxFileStore: "256MB")
        let edgeDirectory = ScratchDirectory("ot-edge")
        let centralDirectory = ScratchDirectory("ot-central")
        let notify = try [NotifyListener(in: edgeDirectory), NotifyListener(in: centralDirectory)]
        func start(_ extra: [String]) throws -> [DaemonProcess] {
            notify.forEach { $0.reset() }
            let common = ["--partitions-total", "4", "--stream-replicas", "1"] + extra
            return [
                try DaemonProcess(
                    in: edgeDirectory,
                    arguments: ["--forward", server.url, "--metrics-listen", edgeDirectory.file("m.sock")] + common,
                    notify: notify[0]),
                try DaemonProcess(
                    in: centralDirectory,
                    arguments: [
                        "--consume", server.url, "--partitions", "0-3", "--metrics-listen",
                        centralDirectory.file("m.sock"),
                    ] + common, notify: notify[1]),
            ]
        }
        // 1 GiB cannot be placed on a server allowed 256 MB: every daemon says so, with the fix.
        var daemons = try start(["--stream-max-mb", "1024"])
        guard daemons.allSatisfy({ $0.waitReady() }) else { return }
        let lines = FleetRecords.simulated(users: 100, seed: 20)
        let answers = try LineClient(path: daemons[0].socketPath).exchange(lines)
        #expect(answers.allSatisfy { $0.status == "accepted" }, "ingest goes on while the stream is down")
        for (daemon, socket) in zip(daemons, [edgeDirectory.file("m.sock"), centralDirectory.file("m.sock")]) {
            let status = daemon.notify.waitFor(timeout: 20) { $0.contains("STREAM DOWN") }
            #expect(status?.contains("--stream-max-mb") == true, "\(status ?? daemon.stderr)")
            #expect(MetricsScrape.metric("offertrack_stream_up", at: socket) == "0")
            #expect(
                try eventually(10) { try FleetStatus.json(daemon).contains(#""up":false,"problem":"#) })
            let text = try Shell.run(
                Binaries.cli, ["status", "--db", daemon.databasePath, "--socket", daemon.socketPath])
            #expect(text.output.contains("DOWN: ") && text.output.contains("max_file_store"), "\(text.output)")
            #expect(daemon.stderr.contains("STREAM DOWN"), "one log line")
        }
        #expect(try JournalInspector.lines(of: daemons[1].databasePath).isEmpty)
        // Without the flag the stream is sized to what the server can place; everything arrives.
        DaemonProcess.terminateCleanly(daemons)
        daemons = try start([])
        guard daemons.allSatisfy({ $0.waitReady() }) else { return }
        #expect(try eventually { try JournalInspector.lines(of: daemons[1].databasePath).count >= lines.count })
        #expect(try JournalInspector.lines(of: daemons[1].databasePath).sorted() == lines.sorted())
        #expect(MetricsScrape.metric("offertrack_stream_up", at: edgeDirectory.file("m.sock")) == "1")
        #expect(MetricsScrape.metric("offertrack_stream_up", at: centralDirectory.file("m.sock")) == "1")
        #expect(
            try JetStreamClient(servers: [server.url], name: "probe").streamInfo("OFFERTRACK").map {
                $0.maxBytes > 0 && $0.maxBytes <= 256 << 20
            } == true)
        for daemon in daemons {
            #expect(try eventually(5) { try FleetStatus.json(daemon).contains(#""up":true"#) })
            daemon.signal(Signals.terminate)
            #expect(daemon.waitExit() == 0)
        }
    }

    @Test func aCentralStartedBeforeTheClusterAndTheStreamConsumesOnceTheyAreUp() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        server.stop()
        let common = ["--partitions-total", "4", "--stream-replicas", "1"]
        let centralDirectory = ScratchDirectory("ot-central")
        let central = try DaemonProcess(
            in: centralDirectory, arguments: ["--consume", server.url, "--partitions", "0-3"] + common)
        guard central.waitReady() else { return }
        let down = central.notify.waitFor(timeout: 20) { $0.contains("STREAM DOWN") }
        #expect(down?.contains("no JetStream server answers") == true, "\(down ?? central.stderr)")
        try server.start()
        #expect(central.notify.waitFor(timeout: 20) { !$0.contains("STREAM DOWN") } != nil)
        let edgeDirectory = ScratchDirectory("ot-edge")
        let edge = try DaemonProcess(in: edgeDirectory, arguments: ["--forward", server.url] + common)
        guard edge.waitReady() else { return }
        let lines = FleetRecords.simulated(users: 100, seed: 21)
        #expect(try LineClient(path: edge.socketPath).exchange(lines).allSatisfy { $0.status == "accepted" })
        #expect(try eventually { try TestFleet.centralLines([central]).count >= lines.count })
        #expect(try TestFleet.centralLines([central]).sorted() == lines.sorted())
        DaemonProcess.terminateCleanly([edge, central])
    }

    @Test func consumersDeletedOnTheServerWhileRecordsFlowAreBoundAgain() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        guard let (centrals, edge) = try TestFleet.twoCentralsAndAnEdge(server) else { return }
        let lines = FleetRecords.simulated(users: 300, seed: 22)
        let half = lines.count / 2
        let operatorClient = try JetStreamClient(servers: [server.url], name: "operator")
        let client = try LineClient(path: edge.socketPath)
        let first = client.exchange(Array(lines[..<half]))
        #expect(first.allSatisfy { $0.status == "accepted" })
        #expect(try eventually { try TestFleet.centralLines(centrals).count >= 10 })
        // An operator deletes every consumer while the first half is still being consumed, then the second half
        // comes. (Each central binds its partitions on its own time: the deletions wait until all four exist.)
        #expect(
            try eventually {
                try (0..<4).allSatisfy {
                    try operatorClient.consumerExists(stream: "OFFERTRACK", durable: "central-\($0)")
                }
            })
        for partition in 0..<4 {
            try operatorClient.deleteConsumer(stream: "OFFERTRACK", durable: "central-\(partition)")
        }
        let second = client.exchange(Array(lines[half...]))
        #expect(second.allSatisfy { $0.status == "accepted" })
        #expect(try eventually(30) { try TestFleet.centralLines(centrals).count >= lines.count })
        Thread.sleep(forTimeInterval: 0.5)
        let held = try TestFleet.centralLines(centrals)
        #expect(held.count == lines.count && held.sorted() == lines.sorted(), "\(held.count) of \(lines.count)")
        #expect(centrals.contains { $0.stderr.contains("is gone from the stream OFFERTRACK; binding again") })
        DaemonProcess.terminateCleanly(centrals + [edge])
    }

    /// The stream deleted and created again at once by an operator while records flow, with one central daemon
    /// down so that its partitions' records wait in the stream that is lost: the edge finds the new stream and
    /// forwards its journal again, the consumers are bound again, and every record the edge acknowledged is in
    /// one central journal once; the lags go to 0.
    @Test func theStreamDeletedAndCreatedAgainWhileRecordsFlowLosesNothing() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        let common = ["--partitions-total", "4", "--stream-replicas", "1"]
        let centralDirectories = [ScratchDirectory("ot-central-a"), ScratchDirectory("ot-central-b")]
        let notify = try centralDirectories.map { try NotifyListener(in: $0) }
        func central(_ index: Int) throws -> DaemonProcess {
            notify[index].reset()
            return try DaemonProcess(
                in: centralDirectories[index],
                arguments: ["--consume", server.url, "--partitions", index == 0 ? "0-1" : "2-3"] + common,
                notify: notify[index])
        }
        var centrals = try [central(0), central(1)]
        let edge = try DaemonProcess(in: ScratchDirectory("ot-edge"), arguments: ["--forward", server.url] + common)
        guard (centrals + [edge]).allSatisfy({ $0.waitReady() }) else { return }
        let lines = FleetRecords.simulated(users: 300, seed: 23)
        let third = lines.count / 3
        let client = try LineClient(path: edge.socketPath)
        #expect(client.exchange(Array(lines[..<third])).allSatisfy { $0.status == "accepted" })
        #expect(try eventually { try TestFleet.centralLines(centrals).count >= third })
        // Central b stops: the second third's records of its partitions wait in the stream, all forwarded.
        centrals[1].signal(Signals.terminate)
        #expect(centrals[1].waitExit() == 0)
        #expect(client.exchange(Array(lines[third..<(2 * third)])).allSatisfy { $0.status == "accepted" })
        #expect(try eventually { try FleetStatus.json(edge).contains(#""lagRecords":0,"#) })
        // The last third flows while an operator deletes the stream and creates it again.
        let last = Array(lines[(2 * third)...])
        let refused = Mutex<[String]>([])
        let sent = DispatchSemaphore(value: 0)
        let socket = edge.socketPath
        Thread {
            defer { sent.signal() }
            guard let client = try? LineClient(path: socket) else { return refused.withLock { $0.append("connect") } }
            for line in last {
                let answer = client.exchange([line])
                if answer.first?.status != "accepted" { refused.withLock { $0.append("\(answer)") } }
                Thread.sleep(forTimeInterval: 0.002)
            }
        }.start()
        Thread.sleep(forTimeInterval: 0.1)
        let operatorClient = try JetStreamClient(servers: [server.url], name: "operator")
        try operatorClient.deleteStream("OFFERTRACK")
        try FleetStream(partitionsTotal: 4, replicas: 1, maxMegabytes: 256).ensure(on: operatorClient)
        centrals[1] = try central(1)
        guard centrals[1].waitReady() else { return }
        sent.wait()
        #expect(refused.withLock { $0 }.isEmpty, "\(refused.withLock { $0 })")
        #expect(try eventually(60) { try TestFleet.centralLines(centrals).count >= lines.count })
        Thread.sleep(forTimeInterval: 1)
        let held = try TestFleet.centralLines(centrals)
        #expect(held.count == lines.count && held.sorted() == lines.sorted(), "\(held.count) of \(lines.count)")
        #expect(edge.stderr.contains("was created again"), "\(edge.stderr)")
        // The lags go to 0.
        #expect(try eventually(20) { try FleetStatus.json(edge).contains(#""lagRecords":0,"#) })
        for central in centrals {
            let drained = try eventually(20) {
                try FleetStatus.json(central).contains(#""lagRecords":0,"#)
            }
            #expect(drained, "\((try? FleetStatus.json(central)) ?? "")")
        }
        DaemonProcess.terminateCleanly(centrals + [edge])
    }

    /// Records from the stream pass the corruption gate a socket batch does: damage found by a stream commit
    /// stops committing, is said once in the log, in `STATUS=` and the metrics, and nothing is acknowledged.
    @Test func corruptionFoundByAStreamCommitStopsConsumingAndSaysSo() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        let path = try JournalDamage.journal(in: directory)
        let metrics = directory.file("m.sock")
        let central = try DaemonProcess(
            in: directory,
            arguments: [
                "--consume", server.url, "--partitions", "0-3", "--partitions-total", "4", "--stream-replicas", "1",
                "--metrics-listen", metrics,
            ])
        guard central.waitReady() else { return }
        #expect(try server.waitForStream())
        // The index of ids is not read at start: the first record from the stream reads it.
        let page = try JournalDamage.rootPage(of: "sqlite_autoindex_records_1", in: path)
        try JournalDamage.overwrite(path, offset: UInt64(page - 1) * 4096, count: 4096)
        let client = try JetStreamClient(servers: [server.url], name: "injector")
        for (index, line) in TestRecords.stream(prefix: "s", count: 20).enumerated() {
            try client.publishAsync(subject: Partition.subject(0), data: Array(line.utf8), messageID: "s-\(index)")
        }
        try client.waitForPublishes(timeoutMilliseconds: 5_000)
        #expect(central.notify.waitFor(timeout: 20) { $0.contains("STATUS=") && $0.contains("JOURNAL CORRUPT") } != nil)
        #expect(MetricsScrape.metric("offertrack_journal_corrupt", at: metrics) == "1")
        Thread.sleep(forTimeInterval: 2)  // the consumer's backoff: more attempts would be more lines
        let log = central.stderr
        #expect(log.components(separatedBy: "JOURNAL CORRUPT").count == 2, "reported more than once: \(log)")
        #expect(MetricsScrape.metric("offertrack_storage_failures_total", at: metrics) == "1")
        central.signal(Signals.terminate)
        #expect(central.waitExit() == 0)
    }
}
