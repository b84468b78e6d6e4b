import Fleet
import Foundation
import JournalStore
import JournalVerification
import TestSupport
import Testing

/// `offertrack verify --edge`: every record an edge's stream acknowledged must be in a central journal. The loss it
/// finds cannot be made on purpose (a stream that lost messages its consumers had acknowledged, then gave their
/// sequence numbers to later ones), so the journals are made in that state by real daemons: an edge journal
/// holding every record, two central journals that lack one and hold another with other content.
@Suite struct EdgeReconciliationTests {
    /// Two records for each of 20 users: `c-N` at seq 2N + 1 and `p-N` at seq 2N + 2 in the edge journal.
    static let lines = (0..<20).flatMap { user in
        [
            TestRecords.capabilities(id: "c-\(user)", user: "u-\(user)"),
            TestRecords.presented(id: "p-\(user)", user: "u-\(user)"),
        ]
    }
    /// What reached no central journal (seq 16), and what one holds with another `ts` (seq 25).
    static let lost = "p-7"
    static let differing = TestRecords.capabilities(id: "c-12", user: "u-12", ts: "2026-11-28T11:00:00Z")

    /// A journal made by the daemon from `lines` in `directory`, every one accepted.
    static func journal(_ directory: ScratchDirectory, _ lines: [String]) throws -> String {
        let daemon = try DaemonProcess(in: directory)
        guard daemon.waitReady() else { throw ReconciliationFailure("\(directory.path) did not start") }
        let answers = try LineClient(path: daemon.socketPath).exchange(lines)
        #expect(answers.count == lines.count && answers.allSatisfy { $0.status == "accepted" }, "\(answers)")
        DaemonProcess.terminateCleanly([daemon])
        return daemon.databasePath
    }

    struct ReconciliationFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test func verifyNamesEveryAcknowledgedEdgeRecordThatNoCentralJournalHolds() throws {
        let directories = ["ot-edge", "ot-central-0", "ot-central-1", "ot-empty"].map { ScratchDirectory($0) }
        let edge = try Self.journal(directories[0], Self.lines)
        // The centrals split the users by parity, as two partitions would.
        func central(_ parity: Int) -> [String] {
            Self.lines.enumerated().compactMap { index, line in
                let user = index / 2
                guard user % 2 == parity, !line.contains(#""id":"\#(Self.lost)""#) else { return nil }
                return line.contains(#""id":"c-12""#) ? Self.differing : line
            }
        }
        let centrals = [try Self.journal(directories[1], central(0)), try Self.journal(directories[2], central(1))]
        let databases = centrals.flatMap { ["--db", $0] }
        let title = "edge \(edge): every record the stream acknowledged is in a central journal"

        // Nothing forwarded yet (no watermark): skipped, and said so.
        let unforwarded = try Shell.run(Binaries.cli, ["verify", "--edge", edge] + databases)
        #expect(unforwarded.status == 0, "\(unforwarded.output)")
        #expect(
            unforwarded.output.contains("skipped: \(title): it stores no forwarding watermark"),
            "\(unforwarded.output)")

        // The stream acknowledged up to seq 15: what is missing is still being forwarded, and nothing fails.
        try ForwardingLog(path: edge).setWatermark(15)
        let early = try Shell.run(Binaries.cli, ["verify", "--edge", edge] + databases)
        #expect(early.status == 0, "\(early.output)")
        #expect(
            early.output.contains("ok: \(title) (15, seq up to 15); 25 not yet acknowledged"), "\(early.output)")

        // Acknowledged through the last record: both are named, each with what to do about it.
        try ForwardingLog(path: edge).setWatermark(40)
        let late = try Shell.run(Binaries.cli, ["verify", "--edge", edge] + databases)
        #expect(late.status == 65, "\(late.output)")
        for expected in [
            "FAILED: \(title) (40, seq up to 40); 0 not yet acknowledged",
            "seq 16, id p-7: in no central journal",
            "seq 25, id c-12: a central journal holds this id with other content",
            "1 in no central journal: once the stream's duplicate window",
            "offertrack forward --db \(edge) --from-seq 16 --servers URL",
            "1 held with other content: a central keeps what it journaled first",
        ] {
            #expect(late.output.contains(expected), "missing \(expected) in \(late.output)")
        }
        // Only the edge check fails: the central journals themselves are sound.
        #expect(late.output.components(separatedBy: "FAILED").count == 2, "\(late.output)")

        // Read in pages of every size, the same findings.
        let edgeJournal = try ReadOnlyJournal(path: edge)
        let centralJournals = try centrals.map { try ReadOnlyJournal(path: $0) }
        let whole = try EdgeReconciliation.check(edge: edgeJournal, centrals: centralJournals)
        for pageSize in [1, 3, 16, 39, 40] {
            let paged = try EdgeReconciliation.check(edge: edgeJournal, centrals: centralJournals, pageSize: pageSize)
            #expect(paged.name == whole.name && paged.problems == whole.problems, "pages of \(pageSize)")
        }

        // Against a journal that holds none of them: the first ten are named, and the rest counted.
        let empty = try Self.journal(directories[3], [])
        let none = try Shell.run(Binaries.cli, ["verify", "--edge", edge, "--db", empty])
        #expect(none.status == 65, "\(none.output)")
        #expect(none.output.contains("seq 10, id p-4: in no central journal"), "\(none.output)")
        #expect(!none.output.contains("seq 11,"), "more than ten named: \(none.output)")
        #expect(none.output.contains("40 in no central journal") && none.output.contains("--from-seq 1 "))

        // The lost record forwarded again (here sent straight to its central): only the other content is left,
        // which forwarding cannot change, so no forward is suggested.
        _ = try Self.journal(directories[2], Self.lines.filter { $0.contains(#""id":"\#(Self.lost)""#) })
        let forwarded = try Shell.run(Binaries.cli, ["verify", "--edge", edge] + databases)
        #expect(forwarded.status == 65, "\(forwarded.output)")
        #expect(forwarded.output.contains("1 held with other content"), "\(forwarded.output)")
        #expect(!forwarded.output.contains("p-7") && !forwarded.output.contains("offertrack forward"))

        // An edge's journal given as a central one too is refused.
        let same = try Shell.run(Binaries.cli, ["verify", "--edge", edge, "--db", edge])
        #expect(same.status == 64 && same.output.contains("is given as --edge and as --db"), "\(same.output)")
    }

    /// Central journals that leave a partition out would make all of its records read as lost: refused instead.
    @Test func centralJournalsThatMissAPartitionAreNamedNotCountedAsLosses() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        let centralDirectory = ScratchDirectory("ot-central")
        let central = try DaemonProcess(
            in: centralDirectory,
            arguments: [
                "--consume", server.url, "--stream-replicas", "1", "--partitions", "0-1", "--partitions-total", "4",
            ])
        guard central.waitReady() else { return }
        DaemonProcess.terminateCleanly([central])
        let edgeDirectory = ScratchDirectory("ot-edge")
        let edge = try Self.journal(edgeDirectory, Self.lines)
        try ForwardingLog(path: edge).setWatermark(40)
        let outcome = try Shell.run(Binaries.cli, ["verify", "--edge", edge, "--db", central.databasePath])
        #expect(outcome.status == 65, "\(outcome.output)")
        #expect(
            outcome.output.contains("no journal given holds partitions 2,3 of 4: give every central journal"),
            "\(outcome.output)")
        #expect(!outcome.output.contains("in no central journal"), "\(outcome.output)")
    }
}
