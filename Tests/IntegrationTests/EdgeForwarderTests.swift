import AttributionJoin
import Fleet
import Foundation
import JournalStore
import NATS
import OfferTrackDomain
import Posix
import Simulator
import TestSupport
import Testing
import WireFormat

/// An edge's forwarder (SPEC section 10) against a real nats-server: every journaled record reaches the stream
/// once, verbatim, on its user's partition subject, the watermark follows the acknowledgements, and a stream
/// outage only delays forwarding.
@Suite(.serialized) struct EdgeForwarderTests {
    static let partitions = 4

    static func stream() -> FleetStream {
        FleetStream(name: "OFFERTRACK", partitionsTotal: partitions, replicas: 1, maxMegabytes: 256)
    }

    static func append(_ lines: [String], to writer: JournalWriter) throws {
        let submissions = lines.compactMap { line -> Submission? in
            guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else { return nil }
            return Submission(record: record, line: Array(line.utf8))
        }
        _ = try writer.append(submissions, receivedAt: Clock.wallMilliseconds())
    }

    /// Waits until the forwarder has every record acknowledged; false after `seconds`.
    static func waitForwarded(_ forwarder: EdgeForwarder, through seq: Int64, seconds: Double = 60) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if forwarder.progress.acknowledgedThrough >= seq && forwarder.progress.lagRecords == 0 { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }

    /// Every message of every partition, as (subject, id, payload).
    static func streamContents(_ server: NATSServer) throws -> [(subject: String, id: String, payload: [UInt8])] {
        let client = try JetStreamClient(servers: [server.url], name: "reader")
        var found: [(String, String, [UInt8])] = []
        for partition in 0..<partitions {
            let subscription = try client.pullSubscription(
                stream: "OFFERTRACK", durable: "check-\(UInt32.random(in: 0...UInt32.max))",
                filterSubject: Partition.subject(partition))
            while true {
                let batch = try subscription.fetch(batch: 500, timeoutMilliseconds: 300)
                if batch.isEmpty { break }
                for message in batch {
                    found.append((message.subject, message.header("Nats-Msg-Id") ?? "", message.data))
                    try message.acknowledge()
                }
            }
        }
        return found
    }

    /// The stream holds every record of the edge journal at `path` (`journal`, its lines in `seq` order) once,
    /// verbatim: in messages of one partition's records on its subject, each line ending in `\n`, in `seq`
    /// order, each message's id `<journal id>:<first seq>-<last seq>:<digest>`. Returns the number of messages.
    @discardableResult
    static func checkExactlyOnce(_ server: NATSServer, journal: [String], path: String) throws -> Int {
        let contents = try streamContents(server)
        let journalID = try ForwardingLog(path: path).journalID()
        var seqOf: [String: Int64] = [:]
        for (index, line) in journal.enumerated() { seqOf[line] = Int64(index + 1) }
        var lines: [String] = []
        for message in contents {
            #expect(message.payload.last == UInt8(ascii: "\n"), "\(message.id) does not end in a newline")
            let carried = message.payload.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
                .dropLast().map { String(decoding: $0, as: UTF8.self) }
            lines += carried
            let seqs = carried.compactMap { seqOf[$0] }
            #expect(seqs.count == carried.count && seqs == seqs.sorted(), "\(message.id): not in seq order")
            if let first = seqs.first, let last = seqs.last {
                #expect(message.id.hasPrefix("\(journalID):\(first)-\(last):"), "\(message.id)")
            }
            for line in carried {
                guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else {
                    Issue.record("not a record: \(line)")
                    continue
                }
                #expect(message.subject == Partition.subject(Partition.of(user: record.user, total: partitions)))
            }
        }
        #expect(lines.count == journal.count, "\(lines.count) records in the stream for \(journal.count)")
        #expect(Set(contents.map(\.id)).count == contents.count)
        let missing = Set(journal).subtracting(lines)
        #expect(missing.isEmpty, "\(missing.count) records never reached the stream")
        let verbatim = lines.sorted() == journal.sorted()
        #expect(verbatim, "the stream's lines are not the journal's, once each")
        return contents.count
    }

    @Test func everyRecordReachesTheStreamOnceAndTheWatermarkFollows() throws {
        let directory = ScratchDirectory()
        let path = directory.file("edge.db")
        let writer = try JournalWriter(
            path: path, options: .init(durability: .normal, schema: .migrate, maintainsDerivedTables: false))
        let lines = Array(
            WorkloadSimulator(users: 400, seed: 8).filter { !$0.isDuplicate && $0.record.type != .erasure }.map(\.line))
        try Self.append(lines, to: writer)
        let server = try NATSServer(in: directory)
        let forwarder = try EdgeForwarder(
            journalPath: path, servers: [server.url], stream: Self.stream(), maxInFlight: 256)
        forwarder.start()
        let last = try writer.lastSeq()
        #expect(Self.waitForwarded(forwarder, through: last), "\(forwarder.progress)")
        forwarder.stop()
        #expect(try ForwardingLog(path: path).watermark() == last)
        let messages = try Self.checkExactlyOnce(server, journal: lines, path: path)
        // Journaled before forwarding started, the records go in few messages: reads of at least 128 records (half
        // the records in flight at most), each read's records in one message per partition.
        #expect(messages <= (lines.count + 127) / 128 * Self.partitions, "\(messages) messages")
        #expect(forwarder.progress.messages == messages && forwarder.progress.messageRecords == lines.count)
    }

    /// An edge journal holding the first half of a simulated workload's records, a server, and a forwarder
    /// started on them (128 in flight at most); the caller journals the second half.
    static func halfJournaled(
        in directory: ScratchDirectory, users: Int, seed: UInt64, acknowledgementTimeoutMilliseconds: Int64 = 5_000
    ) throws -> (writer: JournalWriter, lines: [String], server: NATSServer, forwarder: EdgeForwarder) {
        let path = directory.file("edge.db")
        let writer = try JournalWriter(
            path: path, options: .init(durability: .normal, schema: .migrate, maintainsDerivedTables: false))
        let lines = Array(
            WorkloadSimulator(users: users, seed: seed).filter { !$0.isDuplicate && $0.record.type != .erasure }.map(
                \.line))
        try append(Array(lines[..<(lines.count / 2)]), to: writer)
        let server = try NATSServer(in: directory)
        let forwarder = try EdgeForwarder(
            journalPath: path, servers: [server.url], stream: stream(), maxInFlight: 128,
            acknowledgementTimeoutMilliseconds: acknowledgementTimeoutMilliseconds)
        forwarder.start()
        return (writer, lines, server, forwarder)
    }

    @Test func aStreamOutageOnlyDelaysForwarding() throws {
        let directory = ScratchDirectory()
        let (writer, lines, server, forwarder) = try Self.halfJournaled(in: directory, users: 600, seed: 9)
        let half = lines.count / 2
        // The stream dies while records are being forwarded: once the first are acknowledged, the server is frozen
        // (SIGSTOP) so that what the forwarder publishes next stays unanswered, and killed once publishes are in
        // flight; the rest of the records are journaled during the outage.
        let firstHalf = try writer.lastSeq()
        let deadline = Date().addingTimeInterval(30)
        while forwarder.progress.acknowledgedThrough == 0 && Date() < deadline { usleep(500) }
        server.pause()
        while forwarder.progress.inFlight == 0 && Date() < deadline { usleep(500) }
        let cut = forwarder.progress
        server.stop()
        #expect(cut.inFlight > 0, "no publish was in flight at the cut: \(cut)")
        #expect(cut.acknowledgedThrough > 0 && cut.acknowledgedThrough < firstHalf, "\(cut) of \(firstHalf)")
        try Self.append(Array(lines[half...]), to: writer)
        // Nothing is acknowledged during the outage (after a second for answers the server sent before it froze
        // and that still sat in the socket).
        Thread.sleep(forTimeInterval: 1)
        let settled = forwarder.progress
        Thread.sleep(forTimeInterval: 1)
        #expect(forwarder.progress.acknowledgedThrough == settled.acknowledgedThrough, "\(forwarder.progress)")
        #expect(settled.acknowledgedThrough < firstHalf, "\(settled) of \(firstHalf)")
        try server.start()
        // The publishes cut in flight either fail (and are sent again from the watermark) or wait in libnats's
        // reconnect buffer and go out after the restart, depending on timing: either way every record ends up
        // in the stream once.
        #expect(Self.waitForwarded(forwarder, through: try writer.lastSeq()), "\(forwarder.progress)")
        forwarder.stop()
        try Self.checkExactlyOnce(server, journal: lines, path: directory.file("edge.db"))
    }

    /// A server that dies holding publishes it never answered (stopped, then killed) loses them; nothing else
    /// tells the forwarder, so only the acknowledgement timeout makes it publish them again.
    @Test func publishesAServerDiedHoldingAreSentAgain() throws {
        let directory = ScratchDirectory()
        let (writer, lines, server, forwarder) = try Self.halfJournaled(
            in: directory, users: 300, seed: 10, acknowledgementTimeoutMilliseconds: 1_000)
        let half = lines.count / 2
        #expect(Self.waitForwarded(forwarder, through: try writer.lastSeq()), "\(forwarder.progress)")
        server.pause()
        try Self.append(Array(lines[half...]), to: writer)
        Thread.sleep(forTimeInterval: 0.5)
        server.stop()
        try server.start()
        #expect(Self.waitForwarded(forwarder, through: try writer.lastSeq(), seconds: 30), "\(forwarder.progress)")
        #expect(forwarder.progress.failures >= 1)
        forwarder.stop()
        try Self.checkExactlyOnce(server, journal: lines, path: directory.file("edge.db"))
    }

    /// Publishes lost by a server that died holding them are never answered, so libnats keeps them pending (it
    /// allows twice `maxInFlight` before every publish stalls). Each outage loses up to the messages in flight:
    /// the forwarder forgets those pending when it publishes them again, so outages over a daemon's life do not
    /// add up to a forwarder that can never publish again.
    @Test func publishesLostInManyOutagesDoNotStallForwardingForGood() throws {
        let directory = ScratchDirectory()
        let path = directory.file("edge.db")
        let writer = try JournalWriter(
            path: path, options: .init(durability: .normal, schema: .migrate, maintainsDerivedTables: false))
        let lines = Array(
            WorkloadSimulator(users: 100, seed: 11).filter { !$0.isDuplicate && $0.record.type != .erasure }.map(
                \.line
            ).prefix(1 + 4 * 32))
        try Self.append([lines[0]], to: writer)
        let server = try NATSServer(in: directory)
        // One record a message and 32 in flight: libnats stalls with more than 64 publishes pending.
        let forwarder = try EdgeForwarder(
            journalPath: path, servers: [server.url], stream: Self.stream(), maxInFlight: 32, maxMessageRecords: 1,
            acknowledgementTimeoutMilliseconds: 1_000)
        forwarder.start()
        #expect(Self.waitForwarded(forwarder, through: 1), "\(forwarder.progress)")
        for outage in 0..<4 {
            // Frozen, the server takes 32 publishes into its socket and answers none; killed, it loses them.
            server.pause()
            try Self.append(Array(lines[(1 + outage * 32)..<(1 + (outage + 1) * 32)]), to: writer)
            let deadline = Date().addingTimeInterval(30)
            while forwarder.progress.inFlight < 32 && Date() < deadline { usleep(1_000) }
            Thread.sleep(forTimeInterval: 0.2)
            server.stop()
            try server.start()
            #expect(
                Self.waitForwarded(forwarder, through: try writer.lastSeq(), seconds: 30),
                "outage \(outage): \(forwarder.progress)")
        }
        forwarder.stop()
        try Self.checkExactlyOnce(server, journal: lines, path: path)
    }
}

extension EdgeForwarderTests {
    /// `offertrackd --forward`: ingest is answered while the stream is down; once it is up every acknowledged
    /// record is forwarded, `status` shows the lag fall to 0, and `offertrack forward --from-seq 1` sends them
    /// again without the stream storing a second copy.
    @Test func anEdgeDaemonAcknowledgesLocallyAndForwardsWhenTheStreamIsUp() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        server.stop()
        let daemon = try DaemonProcess(
            in: directory,
            arguments: ["--forward", server.url, "--partitions-total", "4", "--stream-replicas", "1"])
        guard daemon.waitReady() else { return }
        let lines = Array(
            WorkloadSimulator(users: 150, seed: 12).filter { !$0.isDuplicate && $0.record.type != .erasure }.map(\.line)
        )
        let answers = try LineClient(path: daemon.socketPath).exchange(lines)
        #expect(answers.count == lines.count && answers.allSatisfy { $0.status == "accepted" })
        func status() throws -> String {
            try Shell.run(
                Binaries.cli,
                ["status", "--db", daemon.databasePath, "--socket", daemon.socketPath, "--format", "json"]
            ).output
        }
        #expect(try status().contains(#""forward":{"acknowledgedThrough":0,"lagRecords":\#(lines.count)"#))
        try server.start()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !(try status().contains(#""lagRecords":0,"#)) { Thread.sleep(forTimeInterval: 0.05) }
        #expect(try status().contains(#""forward":{"acknowledgedThrough":\#(lines.count),"lagRecords":0,"#))
        try Self.checkExactlyOnce(server, journal: lines, path: daemon.databasePath)
        let again = try Shell.run(
            Binaries.cli,
            [
                "forward", "--db", daemon.databasePath, "--from-seq", "1", "--servers", server.url,
                "--partitions-total", "4",
            ])
        #expect(again.status == 0 && again.output.contains("forwarded seq 1 through \(lines.count)"), "\(again.output)")
        try Self.checkExactlyOnce(server, journal: lines, path: daemon.databasePath)
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
    }
}
