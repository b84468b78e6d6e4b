import Foundation
import NATS
import OfferTrackDomain
import Simulator
import Synchronization
import TestSupport
import Testing
import WireFormat

/// The thin libnats wrapper against a real `nats-server` with JetStream: stream creation, asynchronous publishes
/// with message ids (and the stream's deduplication), durable pull consumers, and a full stream refusing.
@Suite(.serialized) struct NATSClientTests {
    static func stream(_ name: String = "OFFERTRACK", maxBytes: Int64 = 64 << 20) -> StreamConfiguration {
        StreamConfiguration(
            name: name, subjects: ["offertrack.records.>"], replicas: 1, maxBytes: maxBytes,
            duplicatesWindowMilliseconds: 120_000)
    }

    /// Collects acknowledgements from libnats's thread.
    final class Acks: Sendable {
        let received = Mutex<[PublishAck]>([])
        func add(_ ack: PublishAck) { received.withLock { $0.append(ack) } }
        var all: [PublishAck] { received.withLock { $0 } }
    }

    @Test func publishesAreStoredOnceAndConsumedDurably() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        let acks = Acks()
        let client = try JetStreamClient(servers: [server.url], name: "test-edge", onAcknowledgement: acks.add)
        #expect(try client.addStreamIfAbsent(Self.stream()))
        #expect(try !client.addStreamIfAbsent(Self.stream()))
        let lines = Array(WorkloadSimulator(users: 200, seed: 4).lines.prefix(600))
        var partitions: [Int: [String]] = [:]
        for (index, line) in lines.enumerated() {
            guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else { continue }
            let partition = Partition.of(user: record.user, total: 4)
            partitions[partition, default: []].append(line)
            try client.publishAsync(
                subject: Partition.subject(partition), data: Array(line.utf8), messageID: "id-\(index)")
        }
        try client.waitForPublishes(timeoutMilliseconds: 10_000)
        #expect(acks.all.count == lines.count)
        #expect(acks.all.allSatisfy { $0.failure == nil && !$0.duplicate && $0.sequence != nil })
        #expect(Set(acks.all.compactMap(\.messageID)).count == lines.count)
        // A resend inside the duplicates window is answered with the first copy's sequence.
        try client.publishAsync(subject: Partition.subject(0), data: [1], messageID: "id-0")
        try client.waitForPublishes(timeoutMilliseconds: 10_000)
        let resend = try #require(acks.all.last)
        #expect(resend.duplicate && resend.messageID == "id-0")
        #expect(resend.sequence == acks.all.first { $0.messageID == "id-0" }?.sequence)

        // A durable consumer per partition gets exactly that partition's lines, verbatim, in order.
        for (partition, expected) in partitions {
            let subscription = try client.pullSubscription(
                stream: "OFFERTRACK", durable: "central-\(partition)", filterSubject: Partition.subject(partition))
            var received: [String] = []
            while true {
                let batch = try subscription.fetch(batch: 100, timeoutMilliseconds: 500)
                if batch.isEmpty { break }
                for message in batch {
                    #expect(message.subject == Partition.subject(partition))
                    #expect(message.header("Nats-Msg-Id")?.hasPrefix("id-") == true)
                    received.append(String(decoding: message.data, as: UTF8.self))
                    try message.acknowledge()
                }
            }
            #expect(received == expected, "partition \(partition)")
            // Acknowledged messages are not delivered again to the same durable consumer.
            let again = try client.pullSubscription(
                stream: "OFFERTRACK", durable: "central-\(partition)", filterSubject: Partition.subject(partition))
            #expect(try again.fetch(batch: 10, timeoutMilliseconds: 300).isEmpty)
        }
    }

    @Test func aFullStreamRefusesInsteadOfDropping() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        let acks = Acks()
        let client = try JetStreamClient(servers: [server.url], name: "test-full", onAcknowledgement: acks.add)
        try client.addStreamIfAbsent(Self.stream("SMALL", maxBytes: 4_096))
        for index in 0..<100 {
            try client.publishAsync(
                subject: Partition.subject(0), data: Array(repeating: 65, count: 200), messageID: "big-\(index)")
        }
        try client.waitForPublishes(timeoutMilliseconds: 10_000)
        let stored = acks.all.filter { $0.failure == nil }
        let refused = acks.all.filter { $0.failure != nil }
        #expect(stored.count > 0 && refused.count > 0 && stored.count + refused.count == 100)
        // What was stored is the oldest: nothing was dropped to make room.
        let subscription = try client.pullSubscription(
            stream: "SMALL", durable: "reader", filterSubject: Partition.subject(0))
        let first = try subscription.fetch(batch: 1, timeoutMilliseconds: 1_000)
        #expect(first.first?.header("Nats-Msg-Id") == "big-0")
    }
}
