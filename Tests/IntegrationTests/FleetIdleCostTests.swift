import Foundation
import JSON
import NATS
import OfferTrackDomain
import Posix
import TestSupport
import Testing

/// What an idle central daemon costs the stream's servers: each pull request is work for every replica of its
/// consumer, so an empty partition's fetch waits long (and returns at the first message), and one request lists
/// the consumers. Counted by the server itself (`/varz`'s `in_msgs`: every request a client sends), so a slow
/// machine can only send fewer.
@Suite(.serialized) struct FleetIdleCostTests {
    /// The messages `server` has received from clients so far.
    static func inboundMessages(monitorPort: UInt16) throws -> Int? {
        let outcome = try Curl.run(["http://127.0.0.1:\(monitorPort)/varz"])
        guard case .object(let varz)? = try? JSONParser.parse(Array(outcome.output.utf8)),
            case .number(let count)? = varz["in_msgs"], let value = count.int64Value
        else { return nil }
        return Int(value)
    }

    @Test func anIdleCentralSendsAboutOnePullRequestAPartitionASecond() throws {
        let directory = ScratchDirectory()
        let monitorPort = try LoopbackPorts.ephemeral()
        let server = try NATSServer(in: directory, extra: ["-m", String(monitorPort)])
        guard let central = try TestFleet.central(server, in: directory, partitions: "0-3") else { return }
        #expect(try server.waitForStream())
        // Bound and consuming: a record of partition 0 reaches the journal.
        let client = try JetStreamClient(servers: [server.url], name: "injector")
        let record = FleetRecords.inPartitionZero("idle", 1)
        try client.publishAsync(subject: Partition.subject(0), data: FleetRecords.payload(record), messageID: "i-1")
        try client.waitForPublishes(timeoutMilliseconds: 5_000)
        #expect(try eventually(20) { try JournalInspector.count(of: central.databasePath) >= 1 })
        guard let before = try Self.inboundMessages(monitorPort: monitorPort) else {
            Issue.record("no in_msgs in /varz")
            return
        }
        let start = Clock.monotonicMilliseconds()
        usleep(4_000_000)
        guard let after = try Self.inboundMessages(monitorPort: monitorPort) else {
            Issue.record("no in_msgs in /varz")
            return
        }
        let seconds = Double(Clock.monotonicMilliseconds() - start) / 1000
        // Four partitions: a pull request each a second at most (two more each for the fetches in progress at
        // either end), and the consumers listed once every 2 s (one more at either end). At a 100 ms wait it was
        // 4 × 10 a second, and with a request per consumer the check alone was 4 every 2 s.
        let bound = 4 * (Int(seconds) + 2) + Int(seconds / 2) + 2
        #expect(after - before <= bound, "\(after - before) requests in \(seconds) s; at most \(bound)")
        // And still at work: records sent while the fetches wait are consumed.
        let next = FleetRecords.inPartitionZero("idle-next", 2)
        try client.publishAsync(subject: Partition.subject(0), data: FleetRecords.payload(next), messageID: "i-2")
        try client.waitForPublishes(timeoutMilliseconds: 5_000)
        #expect(try eventually(20) { try JournalInspector.count(of: central.databasePath) >= 3 })
        DaemonProcess.terminateCleanly([central])
    }
}
