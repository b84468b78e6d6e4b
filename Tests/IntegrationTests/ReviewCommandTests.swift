import Foundation
import OfferTrackDomain
import Posix
import TestSupport
import Testing

/// `offertrack review` (SPEC 6) against the real daemon: the answer printed, and each exit code.
@Suite struct ReviewCommandTests {
    static let rules = #"{"currency":"USD","rules":[{"affiliateToken":"*","amountMinor":500}]}"#
    static let convertedAt = Timestamp.parse("2026-11-20T10:00:00Z") ?? 0

    /// A daemon with the rules and one attributed conversion `o-a` of user `u-a`.
    static func daemonWithAConversion(_ arguments: [String] = []) throws -> RulesDaemon? {
        guard let running = try RulesDaemon(rules: Self.rules, arguments: arguments) else { return nil }
        let lines = ReviewRecords.conversion("a", at: convertedAt, affiliate: "aff-a")
        let answers = try LineClient(path: running.daemon.socketPath).exchange(lines)
        #expect(answers.map(\.status) == ["accepted", "accepted", "accepted"])
        return running
    }

    static func review(_ daemon: DaemonProcess, _ arguments: [String]) throws -> Shell.Outcome {
        try CLI.run(["review", "--db", daemon.databasePath, "--socket", daemon.socketPath] + arguments)
    }

    @Test func aReviewIsSentPrintedAndShownByExplain() throws {
        guard let running = try Self.daemonWithAConversion() else { return }
        let (daemon, rules) = (running.daemon, running.rules)
        let void = try Self.review(
            daemon, ["--conversion", "o-a", "--decision", "void", "--reason", "refund", "--note", "ticket 4411"])
        #expect(void.status == 0, "\(void.output)")
        let answer = try #require(Answer(void.output.trimmingCharacters(in: .newlines)), "\(void.output)")
        #expect(answer.status == "accepted" && answer.seq != nil)
        let id = try #require(answer.id)
        let explain = [
            "explain", "--db", daemon.databasePath, "--rules", rules, "--user", "u-a", "--as-of", "2026-12-01",
        ]
        let json = try CLI.output(explain + ["--format", "json"])
        #expect(json.contains(#""review":{"id":"\#(id)","#) && json.contains(#""decision":"void","reason":"refund"}"#))
        #expect(json.contains(#""state":"voided""#), "\(json)")
        let text = try CLI.output(explain)
        #expect(text.contains(id) && text.contains("ticket 4411"), "\(text)")
        // A release without a reason lifts it.
        let release = try Self.review(daemon, ["--conversion", "o-a", "--decision", "release"])
        #expect(release.status == 0 && release.output.contains(#""status":"accepted""#), "\(release.output)")
        #expect(try CLI.output(explain + ["--format", "json"]).contains(#""state":"qualified""#))
        #expect(try JournalInspector(path: daemon.databasePath).count() == 5)
        running.stop()
    }

    @Test func usageErrorsAndUnknownConversionsSendNothing() throws {
        guard let running = try Self.daemonWithAConversion() else { return }
        let daemon = running.daemon
        let usage: [[String]] = [
            ["--conversion", "o-a", "--decision", "void"],
            ["--conversion", "o-a", "--decision", "hold"],
            ["--conversion", "o-a", "--decision", "cancel", "--reason", "fraud"],
            ["--conversion", "o-a", "--decision", "void", "--reason", "chargeback"],
            [
                "--conversion", "o-a", "--decision", "hold", "--reason", "policy", "--note",
                String(repeating: "n", count: 501),
            ],
            ["--decision", "void", "--reason", "fraud"],
        ]
        for arguments in usage {
            let outcome = try Self.review(daemon, arguments)
            #expect(outcome.status == 64, "\(arguments): \(outcome.output)")
        }
        // No subscription.outcome has the id: not a record at all, or a presentation.
        for conversion in ["o-nope", "p-a"] {
            let outcome = try Self.review(
                daemon, ["--conversion", conversion, "--decision", "void", "--reason", "test"])
            #expect(outcome.status == 66 && outcome.output.contains(conversion), "\(outcome.output)")
        }
        #expect(try JournalInspector(path: daemon.databasePath).count() == 3)
        running.stop()
    }

    @Test func aUserTheDaemonDoesNotAllowToReviewGetsExit69() throws {
        guard let running = try Self.daemonWithAConversion(["--allow-uid", "65534"]) else { return }
        let daemon = running.daemon
        // nobody reads the journal and reaches the socket, but may not review.
        chmod(running.directory.path, 0o777)
        for suffix in ["", "-wal", "-shm"] { chmod(daemon.databasePath + suffix, 0o666) }
        chmod(daemon.socketPath, 0o666)
        let outcome = try AsNobody.run(
            Binaries.cli,
            [
                "review", "--db", daemon.databasePath, "--socket", daemon.socketPath, "--conversion", "o-a",
                "--decision", "hold", "--reason", "policy",
            ])
        #expect(outcome.status == 69 && outcome.output.contains("--allow-review-uid"), "\(outcome.output)")
        #expect(outcome.output.contains(#""code":"unauthorized""#), "\(outcome.output)")
        #expect(try JournalInspector(path: daemon.databasePath).count() == 3)
        running.stop()
    }

    /// In a fleet the user's records are in one of several journals: the review finds it in the second.
    @Test func theConversionIsFoundInTheSecondOfSeveralJournals() throws {
        let first = ScratchDirectory()
        let other = try DaemonProcess(in: first)
        guard other.waitReady() else { return }
        guard let running = try Self.daemonWithAConversion() else { return }
        let daemon = running.daemon
        let arguments = [
            "review", "--db", other.databasePath, "--db", daemon.databasePath, "--socket", daemon.socketPath,
            "--decision", "void", "--reason", "duplicate", "--conversion",
        ]
        let found = try CLI.run(arguments + ["o-a"])
        #expect(found.status == 0 && found.output.contains(#""status":"accepted""#), "\(found.output)")
        #expect(try JournalInspector(path: daemon.databasePath).count() == 4)
        let missing = try CLI.run(arguments + ["o-b"])
        #expect(missing.status == 66 && missing.output.contains(other.databasePath), "\(missing.output)")
        #expect(try JournalInspector(path: other.databasePath).count() == 0)
    }
}
