import Foundation
import TestSupport
import Testing

/// The daemon saves its summaries of returning users at a clean stop and the next start takes them (the log says
/// so); a start after a crash, or after another command opened the journal to write, finds none and says so.
@Suite struct SavedSummariesRestartTests {
    static let users = 40

    /// A check and a presentation for each user, at `minute` past 10:00.
    static func lines(minute: Int) -> [String] {
        (0..<users).flatMap { user in
            [
                #"{"type":"capabilities","id":"c\#(minute)-\#(user)","ts":"2026-11-28T10:\#(minute):00Z","user":"u\#(user)","authorization":3,"capabilities":2}"#,
                #"{"type":"offer.presented","id":"p\#(minute)-\#(user)","ts":"2026-11-28T10:\#(minute):30Z","user":"u\#(user)","offer":{"action":"subscribe","affiliateToken":"aff"}}"#,
            ]
        }
    }

    static func send(_ lines: [String], to daemon: DaemonProcess) throws -> [String] {
        try LineClient(path: daemon.socketPath).exchange(lines).map(\.status)
    }

    @Test func aCleanStopSavesThemAndACrashLeavesNone() throws {
        // One journal, each daemon in a directory of its own (its socket and notification socket).
        let home = ScratchDirectory()
        let journal = home.file("offertrack.db")
        let first = try DaemonProcess(in: ScratchDirectory(), databasePath: journal)
        guard first.waitReady() else { return }
        #expect(first.waitForLog(containing: "no summaries saved at the last stop"))
        #expect(try Self.send(Self.lines(minute: 10), to: first).allSatisfy { $0 == "accepted" })
        DaemonProcess.terminateCleanly([first])

        let second = try DaemonProcess(in: ScratchDirectory(), databasePath: journal)
        guard second.waitReady() else { return }
        #expect(
            second.waitForLog(
                containing: "the join took \(Self.users) returning users' summaries saved at the last stop"),
            "\(second.stderr)")
        #expect(try Self.send(Self.lines(minute: 20), to: second).allSatisfy { $0 == "accepted" })
        second.kill()

        let third = try DaemonProcess(in: ScratchDirectory(), databasePath: journal)
        guard third.waitReady() else { return }
        #expect(third.waitForLog(containing: "no summaries saved at the last stop"), "\(third.stderr)")
        #expect(try Self.send(Self.lines(minute: 30), to: third).allSatisfy { $0 == "accepted" })
        DaemonProcess.terminateCleanly([third])
        #expect(try Shell.run(Binaries.cli, ["verify", "--db", journal]).status == 0)
    }
}
