import Foundation
import NATS
import OfferTrackDomain
import Posix
import SQLite
import TestSupport
import Testing

/// Forgetting a person in a fleet (SPEC 10 and 11): an erasure sent through an edge reaches the central journal
/// holding the person, which renames their records there and every record of theirs that comes later, through
/// any edge; an edge that restarted before forwarding an erasure says so, and the erasure sent again to the
/// central journal applies it there.
@Suite(.serialized) struct FleetErasureTests {
    static let person = "person-to-forget-7"

    static func erasure(id: String, user: String = person) -> String {
        #"{"type":"erasure","id":"\#(id)","ts":"2026-11-29T08:00:00Z","user":"\#(user)","ticket":"DSR-\#(id)"}"#
    }

    /// The `user` of every record of the journal at `path`, by id.
    static func users(of path: String) throws -> [String: String] {
        let connection = try Connection(path: path, mode: .readOnly)
        let select = try connection.prepare("SELECT id, user FROM records")
        defer { select.reset() }
        var users: [String: String] = [:]
        while try select.step() { users[select.text(0) ?? ""] = select.text(1) ?? "" }
        return users
    }

    /// Whether the database or its WAL holds `text`.
    static func filesHold(_ path: String, _ text: String) -> Bool {
        ["", "-wal"].contains { FileBytes.contain(path + $0, text) }
    }

    @Test func anErasureThroughAnEdgeRenamesThePersonCentrallyAndTheirLaterRecordsThroughAnotherEdge() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        guard let (central, edges) = try TestFleet.aCentralAndTwoEdges(server) else { return }
        defer { DaemonProcess.terminateCleanly([central] + edges) }
        let before = [
            TestRecords.capabilities(id: "a-1", user: Self.person), TestRecords.presented(id: "a-2", user: Self.person),
            TestRecords.capabilities(id: "a-3", user: "someone-else"),
        ]
        #expect(try LineClient(path: edges[0].socketPath).exchange(before).allSatisfy { $0.status == "accepted" })
        #expect(try eventually(30) { try Self.users(of: central.databasePath).count == 3 })

        let answer = try LineClient(path: edges[0].socketPath).exchange([Self.erasure(id: "er-1")])
        #expect(answer.map(\.status) == ["accepted"])
        let name = Erasure.name(erasureID: "er-1")
        // The central journal renames the person's records, the erasure included.
        let renamed = try eventually(30) {
            try Self.users(of: central.databasePath) == [
                "a-1": name, "a-2": name, "a-3": "someone-else", "er-1": name,
            ]
        }
        let held = try Self.users(of: central.databasePath)
        #expect(renamed, "\(held)")

        // Later records of the person, through the other edge (which never saw the erasure): renamed centrally.
        let later = [TestRecords.capabilities(id: "b-1", user: Self.person, ts: "2026-11-30T10:00:00Z")]
        #expect(try LineClient(path: edges[1].socketPath).exchange(later).map(\.status) == ["accepted"])
        #expect(try eventually(30) { try Self.users(of: central.databasePath)["b-1"] == name })
        // Within 60 s neither the central journal's files nor the first edge's hold the person's id.
        for daemon in [central, edges[0]] {
            #expect(
                eventually(60) { !Self.filesHold(daemon.databasePath, Self.person) },
                "\(daemon.databasePath) still holds the id")
        }
        // verify --edge compares with names taken into account: the first edge's records match the central's;
        // the second edge still names the person, and the check says the erasure should go there too.
        let verifyA = try CLI.run(["verify", "--edge", edges[0].databasePath, "--db", central.databasePath])
        #expect(verifyA.status == 0, "\(verifyA.output)")
        #expect(try eventually(10) { try Self.acknowledged(edges[1]) })
        let verifyB = try CLI.run(["verify", "--edge", edges[1].databasePath, "--db", central.databasePath])
        #expect(verifyB.status == 0, "\(verifyB.output)")
        #expect(
            verifyB.output.contains("1 renamed in a central journal by an erasure this edge never received"),
            "\(verifyB.output)")
    }

    /// An edge killed before it could forward an erasure (the stream down) forwards it renamed after its restart,
    /// and its log says the central journal could not apply it; the erasure's line sent again to the central
    /// daemon (answered as a duplicate) renames the person there.
    @Test func anErasureTheEdgeCouldNotForwardWithItsPersonIsAppliedCentrallyWhenSentAgain() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        guard let (central, edges) = try TestFleet.aCentralAndTwoEdges(server) else { return }
        defer { DaemonProcess.terminateCleanly([central, edges[1]]) }
        let before = [TestRecords.capabilities(id: "a-1", user: Self.person)]
        #expect(try LineClient(path: edges[0].socketPath).exchange(before).map(\.status) == ["accepted"])
        #expect(try eventually(30) { try Self.users(of: central.databasePath)["a-1"] != nil })

        server.stop()
        let erasure = Self.erasure(id: "er-2")
        #expect(try LineClient(path: edges[0].socketPath).exchange([erasure]).map(\.status) == ["accepted"])
        edges[0].kill()
        try server.start()
        let restarted = try DaemonProcess(
            in: ScratchDirectory("ot-edge-a2"), arguments: ["--forward", server.url] + TestFleet.common,
            databasePath: edges[0].databasePath)
        defer { DaemonProcess.terminateCleanly([restarted]) }
        guard restarted.waitReady() else { return }
        let name = Erasure.name(erasureID: "er-2")
        #expect(try eventually(30) { try Self.users(of: central.databasePath)["er-2"] == name })
        #expect(try Self.users(of: central.databasePath)["a-1"] == Self.person)
        #expect(
            eventually(10) {
                restarted.stderr.contains("the erasure er-2 (seq 2) is forwarded without the name of the person")
            }, "\(restarted.stderr)")
        #expect(try eventually(10) { try Self.acknowledged(restarted) })
        let unrenamed = try CLI.run(["verify", "--edge", restarted.databasePath, "--db", central.databasePath])
        #expect(unrenamed.status == 65, "\(unrenamed.output)")
        #expect(unrenamed.output.contains("1 renamed by an erasure at the edge and not in the central journals"))

        // Sent again, as first sent, to the central daemon: a duplicate, and the person is renamed there.
        let again = try LineClient(path: central.socketPath).exchange([erasure])
        #expect(again.map(\.status) == ["duplicate"], "\(again)")
        #expect(try Self.users(of: central.databasePath) == ["a-1": name, "er-2": name])
        let verified = try CLI.run(["verify", "--edge", restarted.databasePath, "--db", central.databasePath])
        #expect(verified.status == 0, "\(verified.output)")
        // As after any erasure, within 60 s no file of the central journal holds the person.
        #expect(
            eventually(60) { !Self.filesHold(central.databasePath, Self.person) },
            "the person is still in the central journal's files")
    }

    /// The edge's stream has acknowledged every record it journaled.
    static func acknowledged(_ edge: DaemonProcess) throws -> Bool {
        let status = try FleetStatus.json(edge)
        return status.contains(#""lagRecords":0"#)
    }
}

extension FleetErasureTests {
    /// An erasure sent again (a client's retry: a duplicate) while the stream is down does not take away the
    /// line the edge keeps for the first: once the stream is back, the central journal renames the person.
    @Test func aRepeatedErasureWhileTheStreamIsDownStillReachesTheCentralWithItsPerson() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        guard let (central, edges) = try TestFleet.aCentralAndTwoEdges(server) else { return }
        defer { DaemonProcess.terminateCleanly([central] + edges) }
        let before = [TestRecords.capabilities(id: "a-1", user: Self.person)]
        #expect(try LineClient(path: edges[0].socketPath).exchange(before).map(\.status) == ["accepted"])
        #expect(try eventually(30) { try Self.users(of: central.databasePath)["a-1"] != nil })
        server.stop()
        let erasure = Self.erasure(id: "er-3")
        #expect(try LineClient(path: edges[0].socketPath).exchange([erasure]).map(\.status) == ["accepted"])
        #expect(try LineClient(path: edges[0].socketPath).exchange([erasure]).map(\.status) == ["duplicate"])
        try server.start()
        let name = Erasure.name(erasureID: "er-3")
        #expect(
            try eventually(60) {
                try Self.users(of: central.databasePath) == ["a-1": name, "er-3": name]
            })
    }

    /// A central daemon validates the stream's lines against its own rules' shared ids (rule 4.0): an erasure of an
    /// id its rules name as shared is no person's, so it is counted invalid and never journaled, beside the
    /// message's other records.
    @Test func theCentralRefusesAnErasureOfAnIdItsRulesShare() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        let rules = directory.file("rules.json")
        try #"{"currency":"USD","sharedUsers":["kiosk-7"],"rules":[]}"#.write(
            toFile: rules, atomically: true, encoding: .utf8)
        guard let central = try TestFleet.central(server, in: directory, extra: ["--rules", rules]) else {
            return
        }
        defer { DaemonProcess.terminateCleanly([central]) }
        #expect(try server.waitForStream())
        let kiosk = "kiosk-7"
        let partition = Partition.of(user: kiosk, total: 4)
        let neighbour = TestRecords.capabilities(id: "n-1", user: kiosk)
        let lines = [Self.erasure(id: "er-k", user: kiosk), neighbour]
        let client = try JetStreamClient(servers: [server.url], name: "injector")
        try client.publishAsync(
            subject: Partition.subject(partition), data: FleetRecords.payload(lines), messageID: "kiosk-1")
        try client.waitForPublishes(timeoutMilliseconds: 5_000)
        #expect(try eventually(20) { try Self.users(of: central.databasePath) == ["n-1": kiosk] })
        #expect(
            eventually(10) {
                (try? MetricsScrape.exposition(in: directory)).flatMap {
                    MetricsScrape.value($0, "offertrack_stream_invalid_total")
                } == "1"
            })
    }
}
