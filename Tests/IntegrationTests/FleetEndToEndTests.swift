import Foundation
import OfferTrackDomain
import Posix
import SQLite
import Testing

/// Edge and central daemons over a real nats-server (SPEC section 10): records acknowledged by an edge end up,
/// once and verbatim, in the central journal of their partition; a central journal keeps its partitions.
@Suite(.serialized) struct FleetEndToEndTests {
    static func status(_ daemon: DaemonProcess) throws -> String {
        try Shell.run(
            Binaries.cli, ["status", "--db", daemon.databasePath, "--socket", daemon.socketPath, "--format", "json"]
        ).output
    }

    static func lines(of path: String) throws -> [String] {
        let connection = try Connection(path: path, mode: .readOnly)
        let statement = try connection.prepare("SELECT line FROM records")
        defer { statement.reset() }
        var lines: [String] = []
        while try statement.step() { lines.append(statement.text(0) ?? "") }
        return lines
    }

    @Test func anEdgesRecordsReachTheCentralJournalsOfTheirPartitions() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        let common = ["--partitions-total", "4", "--stream-replicas", "1"]
        let edgeDirectory = ScratchDirectory("ot-edge")
        let edge = try DaemonProcess(in: edgeDirectory, arguments: ["--forward", server.url] + common)
        let centrals = try [("0-1", "ot-central-a"), ("2,3", "ot-central-b")].map { partitions, label in
            try DaemonProcess(
                in: ScratchDirectory(label), arguments: ["--consume", server.url, "--partitions", partitions] + common)
        }
        guard edge.waitReady(), centrals.allSatisfy({ $0.waitReady() }) else { return }
        let lines = Array(WorkloadSimulator(users: 200, seed: 14).filter { !$0.isDuplicate }.map(\.line))
        #expect(try LineClient(path: edge.socketPath).exchange(lines).allSatisfy { $0.status == "accepted" })
        let deadline = Date().addingTimeInterval(60)
        var held: [[String]] = []
        while Date() < deadline {
            held = try centrals.map { try Self.lines(of: $0.databasePath) }
            if held.map(\.count).reduce(0, +) >= lines.count { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        // Every record once, verbatim, in the journal of its user's partition.
        #expect(held.flatMap { $0 }.sorted() == lines.sorted())
        for (index, journal) in held.enumerated() {
            let allowed = index == 0 ? [0, 1] : [2, 3]
            for line in journal {
                guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else { continue }
                #expect(allowed.contains(Partition.of(user: record.user, total: 4)))
            }
        }
        #expect(try Self.status(centrals[0]).contains(#""consume":{"partitions":[0,1],"partitionsTotal":4,"#))
        for central in centrals {
            central.signal(Signals.terminate)
            #expect(central.waitExit() == 0)
        }
        // A central journal refuses other partitions, or another P.
        for other in [
            ["--partitions", "0-2", "--partitions-total", "4"], ["--partitions", "0-1", "--partitions-total", "8"],
        ] {
            let refused = try Shell.run(
                Binaries.daemon,
                ["--consume", server.url, "--db", centrals[0].databasePath, "--socket", directory.file("x.sock")]
                    + other)
            #expect(
                refused.status == 78 && refused.output.contains("this journal holds partitions 0,1 of 4"),
                "\(refused.output)")
        }
        edge.signal(Signals.terminate)
        #expect(edge.waitExit() == 0)
    }
}
