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
/// commit over several and acknowledges it after the last.
@Suite(.serialized) struct FleetBatchTests {
    /// Records in a journal.
    static func count(of path: String) throws -> Int {
        try Connection(path: path, mode: .readOnly).scalarInt("SELECT count(*) FROM records").map(Int.init) ?? 0
    }

    /// A central daemon for `partitions` of 4 on `server`, with a metrics socket; nil when it did not start.
    static func central(
        _ server: NATSServer, in directory: ScratchDirectory, partitions: String = "0-3", extra: [String] = [],
        notify: NotifyListener? = nil
    ) throws -> DaemonProcess? {
        let central = try DaemonProcess(
            in: directory,
            arguments: [
                "--consume", server.url, "--partitions", partitions, "--partitions-total", "4", "--stream-replicas",
                "1",
                "--metrics-listen", directory.file("m.sock"),
            ] + extra, notify: notify)
        guard central.waitReady() else { return nil }
        return central
    }

    /// A scrape of `daemon`'s metrics socket.
    static func scrape(_ directory: ScratchDirectory) throws -> String {
        try MetricsEndpointTests.curl(["--unix-socket", directory.file("m.sock"), "http://localhost/metrics"]).output
    }

    /// `lines` as one message: each followed by `\n`.
    static func payload(_ lines: [String]) -> [UInt8] {
        Array(lines.map { $0 + "\n" }.joined().utf8)
    }

    /// Partition 0's consumer has acknowledged everything it was given, and was given everything.
    static func acknowledgedEverything(_ client: JetStreamClient) -> Bool {
        guard let state = try? client.consumerState(stream: "OFFERTRACK", durable: "central-0") else { return false }
        return state.pending == 0 && state.acknowledgementsPending == 0
    }

    /// Records of partition-0 users (`u-…` of 4 partitions) with ids `prefix-N`.
    static func records(_ prefix: String, _ count: Int) -> [String] {
        let users = (0...).lazy.map { "u-\($0)" }.filter { Partition.of(user: $0, total: 4) == 0 }.prefix(50)
        let names = Array(users)
        return (0..<count).map { TestRecords.capabilities(id: "\(prefix)-\($0)", user: names[$0 % names.count]) }
    }

    @Test func aLineThatIsNotARecordIsCountedAndTheMessagesOtherRecordsAreCommitted() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        guard let central = try Self.central(server, in: directory, partitions: "0") else { return }
        #expect(try FleetMisconfigurationTests.waitForStream(server))
        let own = Self.records("own", 3)
        let stranger = TestRecords.capabilities(id: "wrong-1", user: FleetMisconfigurationTests.user(in: 1, of: 4))
        // Not JSON, then a record missing its fields, among the records; one of another partition.
        let lines = [own[0], "{not json", own[1], #"{"type":"capabilities","id":"x-1"}"#, stranger, own[2]]
        let client = try JetStreamClient(servers: [server.url], name: "injector")
        try client.publishAsync(subject: Partition.subject(0), data: Self.payload(lines), messageID: "hand-1")
        try client.waitForPublishes(timeoutMilliseconds: 5_000)
        #expect(try FleetRecoveryTests.eventually(20) { try Self.count(of: central.databasePath) >= 3 })
        #expect(try FleetEndToEndTests.lines(of: central.databasePath).sorted() == own.sorted())
        // The message is acknowledged (its records committed, its bad lines dropped): never delivered again.
        #expect(FleetRecoveryTests.eventually(10) { Self.acknowledgedEverything(client) })
        let scrape = try Self.scrape(directory)
        #expect(MetricsEndpointTests.value(scrape, "offertrack_stream_invalid_total") == "2", "\(scrape)")
        #expect(MetricsEndpointTests.value(scrape, "offertrack_stream_wrong_partition_total") == "1")
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
        guard let central = try Self.central(server, in: directory, extra: ["--consume-batch", "16"]) else { return }
        #expect(try FleetMisconfigurationTests.waitForStream(server))
        let lines = Self.records("big", 100)
        let client = try JetStreamClient(servers: [server.url], name: "injector")
        try client.publishAsync(subject: Partition.subject(0), data: Self.payload(lines), messageID: "hand-big")
        try client.waitForPublishes(timeoutMilliseconds: 5_000)
        #expect(try FleetRecoveryTests.eventually(20) { try Self.count(of: central.databasePath) >= 100 })
        #expect(FleetRecoveryTests.eventually(10) { Self.acknowledgedEverything(client) })
        #expect(try FleetEndToEndTests.lines(of: central.databasePath).sorted() == lines.sorted())
        // Seven commits of at most 16 records each; nothing delivered twice.
        let scrape = try Self.scrape(directory)
        #expect(MetricsEndpointTests.value(scrape, #"offertrack_commit_records_bucket{le="16"}"#) == "7", "\(scrape)")
        #expect(MetricsEndpointTests.value(scrape, "offertrack_commit_records_count") == "7")
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
        guard var central = try Self.central(server, in: directory, extra: ["--consume-batch", "1"], notify: notify)
        else { return }
        #expect(try FleetMisconfigurationTests.waitForStream(server))
        let lines = Self.records("split", 5_000)
        let client = try JetStreamClient(servers: [server.url], name: "injector")
        try client.publishAsync(subject: Partition.subject(0), data: Self.payload(lines), messageID: "hand-split")
        try client.waitForPublishes(timeoutMilliseconds: 5_000)
        // Killed once some of its records are committed and not all.
        #expect(try FleetRecoveryTests.eventually(30) { try Self.count(of: central.databasePath) >= 20 })
        central.kill()
        let cut = try Self.count(of: central.databasePath)
        #expect(cut < lines.count, "every record was committed before the kill: \(cut)")
        notify.reset()
        guard let restarted = try Self.central(server, in: directory, extra: ["--consume-batch", "1"], notify: notify)
        else { return }
        central = restarted
        #expect(try FleetRecoveryTests.eventually(90) { try Self.count(of: central.databasePath) >= lines.count })
        #expect(try FleetEndToEndTests.lines(of: central.databasePath).sorted() == lines.sorted())
        #expect(FleetRecoveryTests.eventually(10) { Self.acknowledgedEverything(client) })
        // The whole message came again: what was committed before the kill, as duplicates.
        let again = "consumed \(lines.count - cut) (\(cut) duplicate,"
        #expect(central.notify.waitFor { $0.contains(again) } != nil, "\(again)")
        DaemonProcess.terminateCleanly([central])
    }
}
