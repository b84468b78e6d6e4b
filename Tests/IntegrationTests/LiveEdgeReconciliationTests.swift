import Dispatch
import Fleet
import Foundation
import TestSupport
import Testing

/// `offertrack verify --edge` beside running daemons (SPEC 10): records the stream acknowledged that the central
/// daemon has not consumed yet are on their way, not lost; a check run again and again during traffic never fails.
@Suite(.serialized) struct LiveEdgeReconciliationTests {
    @Test func verifyDuringTrafficFindsNothingLost() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        guard let (central, edges) = try TestFleet.aCentralAndTwoEdges(server) else { return }
        defer { DaemonProcess.terminateCleanly([central, edges[1]]) }
        let sending = DispatchGroup()
        sending.enter()
        let edge = edges[0]
        let socket = edge.socketPath
        Thread.detachNewThread {
            defer { sending.leave() }
            for round in 0..<40 {
                _ = try? LineClient(path: socket).exchange(
                    TestRecords.stream(prefix: "live-\(round)", count: 500))
            }
        }
        var runs: [Shell.Outcome] = []
        while sending.wait(timeout: .now()) == .timedOut {
            runs.append(try CLI.run(["verify", "--edge", edge.databasePath, "--db", central.databasePath]))
        }
        #expect(runs.count >= 3, "only \(runs.count) checks ran during the traffic")
        for run in runs {
            #expect(run.status == 0 && run.output.contains("ok: edge "), "\(run.output)")
        }
        // A record the stream never had, marked acknowledged in the stopped edge's journal, is still named lost
        // beside the running central daemon (once nothing more arrives).
        #expect(try eventually(30) { try LiveEdgeReconciliationTests.settled(edge, central) })
        DaemonProcess.terminateCleanly([edge])
        let plain = try DaemonProcess(in: ScratchDirectory("ot-edge-plain"), databasePath: edge.databasePath)
        guard plain.waitReady() else { return }
        let lost = TestRecords.capabilities(id: "never-forwarded", user: "u-lost")
        #expect(try LineClient(path: plain.socketPath).exchange([lost]).map(\.status) == ["accepted"])
        DaemonProcess.terminateCleanly([plain])
        let log = try ForwardingLog(path: edge.databasePath)
        try log.setWatermark(try log.lastSeq())
        let found = try CLI.run(["verify", "--edge", edge.databasePath, "--db", central.databasePath])
        #expect(
            found.status == 65 && found.output.contains("id never-forwarded: in no central journal"), "\(found.output)")
    }

    /// Every record the edge journaled is in the central journal.
    static func settled(_ edge: DaemonProcess, _ central: DaemonProcess) throws -> Bool {
        try JournalInspector.count(of: central.databasePath) == JournalInspector.count(of: edge.databasePath)
    }
}
