import Fleet
import Foundation
import NATS
import OfferTrackDomain
import Posix
import SQLite
import TestSupport
import Testing
import WireFormat

/// Messages that carry several records (SPEC section 10): a central daemon commits a message's records, drops
/// (counts, logs) its lines that are not records without dropping the others, splits a message larger than a
/// commit over several and acknowledges it after the last; single-record messages of edges from before batches
/// are taken beside batched ones; an edge killed while its messages are in flight loses nothing and repeats
/// nothing in the central journal.
@Suite(.serialized) struct FleetBatchTests {
    /// Partition 0's consumer has acknowledged everything it was given, and was given everything.
    static func acknowledgedEverything(_ client: JetStreamClient) -> Bool {
        guard let state = try? client.consumerState(stream: "OFFERTRACK", durable: "central-0") else { return false }
        return state.pending == 0 && state.acknowledgementsPending == 0
    }

    @Test func aLineThatIsNotARecordIsCountedAndTheMessagesOtherRecordsAreCommitted() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        guard let central = try TestFleet.central(server, in: directory, partitions: "0") else { return }
        #expect(try server.waitForStream())
        let own = FleetRecords.inPartitionZero("own", 3)
        let stranger = TestRecords.capabilities(id: "wrong-1", user: FleetRecords.user(in: 1, of: 4))
        // Not JSON, then a record missing its fields, among the records; one of another partition.
        let lines = [own[0], "{not json", own[1], #"{"type":"capabilities","id":"x-1"}"#, stranger, own[2]]
        let client = try JetStreamClient(servers: [server.url], name: "injector")
        try client.publishAsync(subject: Partition.subject(0), data: FleetRecords.payload(lines), messageID: "hand-1")
        try client.waitForPublishes(timeoutMilliseconds: 5_000)
        #expect(try eventually(20) { try JournalInspector.count(of: central.databasePath) >= 3 })
        #expect(try JournalInspector.lines(of: central.databasePath).sorted() == own.sorted())
        // The message is acknowledged (its records committed, its bad lines dropped): never delivered again.
        #expect(eventually(10) { Self.acknowledgedEverything(client) })
        let scrape = try MetricsScrape.exposition(in: directory)
        #expect(MetricsScrape.value(scrape, "offertrack_stream_invalid_total") == "2", "\(scrape)")
        #expect(MetricsScrape.value(scrape, "offertrack_stream_wrong_partition_total") == "1")
        #expect(
            central.stderr.contains(
                "line 2 of 6 of stream message hand-1 on offertrack.records.0 is not a valid record; dropped"),
            "\(central.stderr)")
        #expect(
            central.notify.waitFor { $0.contains("consumed 3 (0 duplicate, 0 conflicting, 2 invalid, 1 of") } != nil)
        DaemonProcess.terminateCleanly([central])
    }

    @Test func aMessageLargerThanACommitIsSplitAndAcknowledgedAfterItsLastCommit() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        guard let central = try TestFleet.central(server, in: directory, extra: ["--consume-batch", "16"]) else {
            return
        }
        #expect(try server.waitForStream())
        let lines = FleetRecords.inPartitionZero("big", 100)
        let client = try JetStreamClient(servers: [server.url], name: "injector")
        try client.publishAsync(subject: Partition.subject(0), data: FleetRecords.payload(lines), messageID: "hand-big")
        try client.waitForPublishes(timeoutMilliseconds: 5_000)
        #expect(try eventually(20) { try JournalInspector.count(of: central.databasePath) >= 100 })
        #expect(eventually(10) { Self.acknowledgedEverything(client) })
        #expect(try JournalInspector.lines(of: central.databasePath).sorted() == lines.sorted())
        // Seven commits of at most 16 records each; nothing delivered twice.
        let scrape = try MetricsScrape.exposition(in: directory)
        #expect(MetricsScrape.value(scrape, #"offertrack_commit_records_bucket{le="16"}"#) == "7", "\(scrape)")
        #expect(MetricsScrape.value(scrape, "offertrack_commit_records_count") == "7")
        #expect(central.notify.waitFor { $0.contains("consumed 100 (0 duplicate,") } != nil)
        DaemonProcess.terminateCleanly([central])
    }

    /// A central daemon killed between two commits of one message has not acknowledged it: after its restart
    /// the stream delivers the message again (after the consumer's 30 s acknowledgement wait) and every record
    /// is journaled, once.
    @Test func aMessageSplitOverCommitsIsDeliveredAgainWhenTheCentralDiesBetweenThem() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        let notify = try NotifyListener(in: directory)
        guard
            var central = try TestFleet.central(server, in: directory, extra: ["--consume-batch", "1"], notify: notify)
        else { return }
        #expect(try server.waitForStream())
        let lines = FleetRecords.inPartitionZero("split", 5_000)
        let client = try JetStreamClient(servers: [server.url], name: "injector")
        try client.publishAsync(
            subject: Partition.subject(0), data: FleetRecords.payload(lines), messageID: "hand-split")
        try client.waitForPublishes(timeoutMilliseconds: 5_000)
        // Killed once a quarter of its records are committed (long after the first commit: an acknowledgement sent
        // after it would have reached the server) and before the last.
        #expect(try eventually(30) { try JournalInspector.count(of: central.databasePath) >= lines.count / 4 })
        central.kill()
        let cut = try JournalInspector.count(of: central.databasePath)
        #expect(cut < lines.count, "every record was committed before the kill: \(cut)")
        notify.reset()
        guard
            let restarted = try TestFleet.central(
                server, in: directory, extra: ["--consume-batch", "1"], notify: notify)
        else { return }
        central = restarted
        #expect(try eventually(90) { try JournalInspector.count(of: central.databasePath) >= lines.count })
        #expect(try JournalInspector.lines(of: central.databasePath).sorted() == lines.sorted())
        #expect(eventually(10) { Self.acknowledgedEverything(client) })
        // The whole message came again: what was committed before the kill, as duplicates.
        let again = "consumed \(lines.count - cut) (\(cut) duplicate,"
        #expect(central.notify.waitFor { $0.contains(again) } != nil, "\(again)")
        DaemonProcess.terminateCleanly([central])
    }

    /// During an upgrade, edges from before batches publish one record a message (with or without its newline,
    /// `Nats-Msg-Id` the record's id) beside upgraded edges' batches: the central journal holds every record once.
    @Test func singleRecordMessagesAreTakenBesideBatches() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        guard let central = try TestFleet.central(server, in: ScratchDirectory("ot-central")) else { return }
        let edge = try DaemonProcess(
            in: ScratchDirectory("ot-edge"),
            arguments: ["--forward", server.url, "--partitions-total", "4", "--stream-replicas", "1"])
        guard edge.waitReady() else { return }
        let batched = FleetRecords.simulated(users: 200, seed: 31)
        let single = TestRecords.stream(prefix: "old", count: 300)
        let client = try JetStreamClient(servers: [server.url], name: "old-edge")
        let half = batched.count / 2
        #expect(
            try LineClient(path: edge.socketPath).exchange(Array(batched[..<half])).allSatisfy {
                $0.status == "accepted"
            })
        // An old edge publishes while the new one forwards; it also sends one record the new edge forwards.
        for (index, line) in (single + [batched[0]]).enumerated() {
            guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else { continue }
            try client.publishAsync(
                subject: Partition.subject(Partition.of(user: record.user, total: 4)),
                data: Array((index % 2 == 0 ? line : line + "\n").utf8), messageID: record.id)
        }
        #expect(
            try LineClient(path: edge.socketPath).exchange(Array(batched[half...])).allSatisfy {
                $0.status == "accepted"
            })
        try client.waitForPublishes(timeoutMilliseconds: 5_000)
        let all = batched + single
        #expect(try eventually(60) { try JournalInspector.count(of: central.databasePath) >= all.count })
        #expect(
            try eventually(20) { try FleetStatus.json(edge).contains(#""lagRecords":0,"#) })
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try JournalInspector.lines(of: central.databasePath).sorted() == all.sorted())
        // The upgraded edge's records went in fewer messages than records.
        let messages = try client.streamInfo("OFFERTRACK")?.messages ?? 0
        #expect(messages <= UInt64(single.count + 1 + batched.count / 2), "\(messages) messages")
        DaemonProcess.terminateCleanly([central, edge])
    }

    /// An edge killed (`kill -9`) while its messages are in flight: once while records flow, then while the
    /// stream holds its publishes unanswered (the server stopped, then killed, so it never stores them). The
    /// watermark it left covers only what the stream acknowledged; restarted, it publishes again from there, and
    /// the central journal holds every record the edge acknowledged, once.
    @Test func anEdgeKilledWithMessagesInFlightLosesAndRepeatsNothing() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        guard let central = try TestFleet.central(server, in: ScratchDirectory("ot-central")) else { return }
        let edgeDirectory = ScratchDirectory("ot-edge")
        let notify = try NotifyListener(in: edgeDirectory)
        func edge() throws -> DaemonProcess {
            notify.reset()
            return try DaemonProcess(
                in: edgeDirectory,
                arguments: ["--forward", server.url, "--partitions-total", "4", "--stream-replicas", "1"],
                notify: notify)
        }
        var daemon = try edge()
        guard daemon.waitReady() else { return }
        let lines = FleetRecords.simulated(users: 2_500, seed: 32)
        let parts = [0, lines.count / 2, lines.count * 3 / 4, lines.count]
        let chunk = { (index: Int) in Array(lines[parts[index]..<parts[index + 1]]) }
        // 1. Killed as soon as the first of the first half's records reach the central journal (usually long before
        // the last does).
        #expect(try LineClient(path: daemon.socketPath).exchange(chunk(0)).allSatisfy { $0.status == "accepted" })
        let deadline = Date().addingTimeInterval(30)
        while try JournalInspector.count(of: central.databasePath) == 0 && Date() < deadline { usleep(500) }
        daemon.kill()
        daemon = try edge()
        guard daemon.waitReady() else { return }
        #expect(try eventually(60) { try JournalInspector.count(of: central.databasePath) >= parts[1] })
        // 2. The stream stops answering; the next quarter is published into it, and the edge is killed.
        server.pause()
        #expect(try LineClient(path: daemon.socketPath).exchange(chunk(1)).allSatisfy { $0.status == "accepted" })
        Thread.sleep(forTimeInterval: 1)  // published and in flight; the watermark is stored every 200 ms
        daemon.kill()
        let watermark = try ForwardingLog(path: daemon.databasePath).watermark()
        #expect(watermark <= Int64(parts[1]), "the watermark \(watermark) passed records never acknowledged")
        server.stop()
        try server.start()
        daemon = try edge()
        guard daemon.waitReady() else { return }
        #expect(try LineClient(path: daemon.socketPath).exchange(chunk(2)).allSatisfy { $0.status == "accepted" })
        #expect(try eventually(60) { try JournalInspector.count(of: central.databasePath) >= lines.count })
        #expect(
            try eventually(20) {
                try FleetStatus.json(daemon).contains(#""lagRecords":0,"#)
            })
        Thread.sleep(forTimeInterval: 0.5)
        let held = try JournalInspector.lines(of: central.databasePath)
        #expect(held.count == lines.count && held.sorted() == lines.sorted(), "\(held.count) of \(lines.count)")
        DaemonProcess.terminateCleanly([daemon, central])
    }
}
