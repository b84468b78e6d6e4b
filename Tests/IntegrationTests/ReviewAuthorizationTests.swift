import Foundation
import OfferTrackDomain
import Posix
import TestSupport
import Testing

/// The peer's right to review (SPEC 2, 3.4, 8) through the real daemon, with a client run as `nobody`.
@Suite struct ReviewAuthorizationTests {
    static let conversionAt = Timestamp.parse("2026-11-20T10:00:00Z") ?? 0

    static func review(_ id: String, reason: String? = "fraud") -> String {
        ReviewRecords.review(id, user: "u-r", conversion: "o-r", "void", reason: reason, at: conversionAt + 3_600_000)
    }

    static func check(_ id: String) -> String {
        ReviewRecords.lapse(id, user: "u-other", at: conversionAt)
    }

    /// Starts a daemon with `arguments` whose socket `nobody` can reach.
    static func reachableDaemon(_ directory: ScratchDirectory, _ arguments: [String]) throws -> DaemonProcess? {
        let daemon = try DaemonProcess(in: directory, arguments: arguments)
        guard daemon.waitReady() else { return nil }
        chmod(directory.path, 0o755)
        chmod(daemon.socketPath, 0o666)
        return daemon
    }

    @Test func aPeerAllowedToConnectButNotToReviewIsRefusedOnlyItsValidReviews() throws {
        let directory = ScratchDirectory()
        guard let daemon = try Self.reachableDaemon(directory, ["--allow-uid", "65534"]) else { return }
        // The daemon's own uid may review: this review is journaled before nobody repeats it.
        let own = try LineClient(path: daemon.socketPath)
        #expect(own.exchange([Self.review("rv-own")]).map(\.status) == ["accepted"])

        let answers = try AsNobody.exchange(
            socket: daemon.socketPath,
            [
                Self.review("rv-nobody"), Self.check("cap-1"), Self.review("rv-bad", reason: nil),
                Self.review("rv-own"), Self.check("cap-2"),
            ])
        #expect(answers.count == 5, "\(answers)")
        guard answers.count == 5 else { return }
        // A valid review: unauthorized, with its id and no field.
        #expect(answers[0].status == "rejected" && answers[0].code == "unauthorized", "\(answers[0])")
        #expect(answers[0].id == "rv-nobody" && answers[0].field == nil, "\(answers[0])")
        #expect(!answers[0].raw.contains(#""field""#), "\(answers[0])")
        // The connection stays open and other records are served.
        #expect(answers[1].status == "accepted" && answers[1].id == "cap-1", "\(answers[1])")
        // The review's own fields are checked before the right to review (SPEC 2's order).
        #expect(answers[2].code == "missing_field" && answers[2].field == "reason", "\(answers[2])")
        // The right to review is checked before the journal: a duplicate is still unauthorized.
        #expect(answers[3].code == "unauthorized" && answers[3].id == "rv-own", "\(answers[3])")
        #expect(answers[4].status == "accepted" && answers[4].id == "cap-2", "\(answers[4])")
        let journal = try JournalInspector(path: daemon.databasePath).seqByID()
        #expect(Set(journal.keys) == ["rv-own", "cap-1", "cap-2"])
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
    }

    /// A reviewer named by uid, primary gid, supplementary gid or user name need not be named by `--allow-uid`.
    @Test(arguments: [
        (["--allow-review-gid", "4242"], [UInt32(4241), 4242]),
        (["--allow-review-gid", "65534"], []),
        (["--allow-review-uid", "65534"], []),
        (["--allow-review-uid", "nobody"], []),
    ])
    func aPeerAllowedToReviewIsServed(arguments: [String], groups: [UInt32]) throws {
        let directory = ScratchDirectory()
        guard let daemon = try Self.reachableDaemon(directory, arguments) else { return }
        let answers = try AsNobody.exchange(
            socket: daemon.socketPath, [Self.review("rv-1"), Self.check("cap-1")], groups: groups)
        #expect(answers.map(\.status) == ["accepted", "accepted"], "\(arguments): \(answers)")
        #expect(try JournalInspector(path: daemon.databasePath).count() == 2)
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
    }

    /// Naming another uid or gid as reviewer neither lets nobody connect nor review.
    @Test func reviewersNamedApartDoNotOpenTheDaemonToOthers() throws {
        let directory = ScratchDirectory()
        guard
            let daemon = try Self.reachableDaemon(
                directory, ["--allow-review-uid", "4000", "--allow-review-gid", "4242"])
        else { return }
        let answers = try AsNobody.exchange(socket: daemon.socketPath, [Self.review("rv-1")], groups: [4241])
        #expect(answers.count == 1 && answers.first?.code == "unauthorized" && answers.first?.id == nil, "\(answers)")
        #expect(try JournalInspector(path: daemon.databasePath).count() == 0)
    }
}
