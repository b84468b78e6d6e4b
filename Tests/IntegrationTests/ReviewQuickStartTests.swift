import Foundation
import OfferTrackDomain
import Posix
import Simulator
import TestSupport
import Testing
import WireFormat

/// The README's quick start with reviews (issue 19): simulate, ingest, report under the example rules; verify and
/// rebuild; and the same reports whatever order the reviews arrive in.
@Suite struct ReviewQuickStartTests {
    static let asOf = "2026-12-01"

    /// The attributed conversions with an affiliate token in `lines` (rule 4) and their states at `asOf`, by id.
    static func attributedConversions(_ lines: [String], rules: CommissionRules)
        -> [(id: String, user: String, ts: Int64, state: QualificationState?)]
    {
        let asOf = Timestamp.parseDay(Self.asOf) ?? 0
        var byUser: [String: [Record]] = [:]
        for line in lines {
            if case .valid(let record) = RecordValidator.validate(Array(line.utf8)) {
                byUser[record.user, default: []].append(record)
            }
        }
        return byUser.compactMap { user, records in
            guard let conversion = Attribution.attribute(userRecords: records, settings: rules.settings).conversion,
                conversion.status.isAttributed, conversion.presentation?.offer.affiliateToken != nil
            else { return nil }
            return (conversion.id, user, conversion.ts, EvaluatedConversion(conversion, rules: rules).state(asOf: asOf))
        }.sorted { $0.id < $1.id }
    }

    /// Reports in every grouping and format, and the explanations of `users` in both formats, as one string.
    static func everything(db: String, rules: String, users: [String]) throws -> String {
        var text = ""
        for grouping in ReportGrouping.allCases {
            for format in ["json", "csv", "table"] {
                text += try CLI.output([
                    "report", "--db", db, "--rules", rules, "--by", grouping.rawValue, "--format", format, "--as-of",
                    asOf,
                ])
            }
        }
        for user in users {
            for format in ["json", "text"] {
                text += try CLI.output([
                    "explain", "--db", db, "--rules", rules, "--user", user, "--format", format, "--as-of", asOf,
                ])
            }
        }
        return text
    }

    /// Starts a daemon on `db` under `rules`; then `ingest` feeds it (given the socket) and must succeed.
    static func ingest(
        _ directory: ScratchDirectory, _ notify: NotifyListener, db: String, rules: String,
        _ ingest: (String) throws -> Shell.Outcome
    ) throws -> DaemonProcess? {
        notify.reset()
        let daemon = try DaemonProcess(
            in: directory, arguments: ["--rules", rules], notify: notify, databasePath: db)
        guard daemon.waitReady() else { return nil }
        let outcome = try ingest(daemon.socketPath)
        #expect(outcome.status == 0 && outcome.output.contains("rejected 0"), "\(outcome.output)")
        return daemon
    }

    @Test func theQuickStartShowsVoidedHeldQualifiedAndPendingMoneyWhateverTheOrder() throws {
        let directory = ScratchDirectory()
        let rules = Repository.file("systemd/rules.example.json")
        let simulated = try CLI.output(["simulate", "--users", "2000", "--start", "2026-09-01", "--days", "90"])
        let workload = simulated.split(separator: "\n").map(String.init)
        let db = directory.file("first.db")
        let notify = try NotifyListener(in: directory)
        // The README's own pipe.
        guard
            let daemon = try Self.ingest(
                directory, notify, db: db, rules: rules,
                { socket in
                    try Shell.run(
                        "/bin/sh",
                        [
                            "-c",
                            #""$0" simulate --users 2000 --start 2026-09-01 --days 90 | "$0" ingest - --socket "$1""#,
                            Binaries.cli, socket,
                        ])
                })
        else { return }

        // The report as the README shows it: every kind of money is there.
        let report = ["--db", db, "--rules", rules, "--as-of", Self.asOf]
        for key in ["voided", "held", "heldCommissionMinor", "commissionMinor", "pendingCommissionMinor", "lapsed"] {
            #expect(try CLI.reportSum(key, report) > 0, "\(key)")
        }
        // aff-42 is held by its rule: some of its conversions are held without any review.
        let affiliate = try CLI.output(["report", "--format", "json"] + report)
        let row = try #require(affiliate.split(separator: "}").first { $0.contains(#""key":"aff-42""#) })
        #expect(!row.contains(#""held":0,"#), "\(row)")
        let parsedRules = try RulesFile(bytes: Array(try String(contentsOfFile: rules, encoding: .utf8).utf8)).rules
        let conversions = Self.attributedConversions(workload, rules: parsedRules)
        // A conversion held by aff-42's rule, never reviewed: explain names the rule and no review.
        let reviewed = Set(workload.compactMap(Self.conversionOfReview))
        let held = try #require(conversions.first { $0.state == .held && !reviewed.contains($0.id) })
        let explained = try CLI.output(["explain", "--user", held.user, "--format", "json"] + report)
        #expect(explained.contains(#""review":null"#) && explained.contains(#""state":"held""#), "\(explained)")
        #expect(explained.contains(#""rule":2,"#), "\(explained)")

        let verify = try CLI.run(["verify", "--db", db, "--rules", rules])
        #expect(verify.status == 0 && !verify.output.contains("FAILED"), "\(verify.output)")

        // The README's month close: October beside the example network file differs in spring26 alone, as it says.
        let reconciled = try CLI.run(
            [
                "reconcile", "--network", Repository.file("docs/examples/network-2026-10.csv"), "--month", "2026-10",
                "--format", "csv",
            ] + report)
        let unmatched = reconciled.output.split(separator: "\n").filter { !$0.hasSuffix(",matched") }
        #expect(reconciled.status == 1, "\(reconciled.output)")
        #expect(
            unmatched == [
                "campaign_token,status,ours,theirs,class", "spring26,approved,4,3,differs",
                "spring26,rejected,1,2,differs",
            ], "\(reconciled.output)")

        // Reviews of our own: one made a day before its conversion, and equal times decided by id, both ways.
        let unreviewed = conversions.filter { $0.state == .qualified && !reviewed.contains($0.id) }
        #expect(unreviewed.count >= 3)
        guard unreviewed.count >= 3 else { return }
        let (early, voidWins, releaseWins) = (unreviewed[0], unreviewed[1], unreviewed[2])
        func review(
            _ id: String, _ target: (id: String, user: String, ts: Int64, state: QualificationState?),
            _ decision: String, at ts: Int64
        )
            -> String
        {
            ReviewRecords.review(
                id, user: target.user, conversion: target.id, decision,
                reason: decision == "release" ? nil : "fraud", at: ts)
        }
        let tie = Timestamp.parse("2026-11-30T12:00:00Z") ?? 0
        let later = [
            review("x-early", early, "void", at: early.ts - Timestamp.millisecondsPerDay),
            review("x-tie-1", voidWins, "release", at: tie), review("x-tie-2", voidWins, "void", at: tie),
            review("y-tie-1", releaseWins, "hold", at: tie), review("y-tie-2", releaseWins, "release", at: tie),
        ]
        let answers = try LineClient(path: daemon.socketPath).exchange(later)
        #expect(answers.allSatisfy { $0.status == "accepted" }, "\(answers)")
        let users =
            Array(Set(workload.filter { $0.contains(#""type":"review""#) }.compactMap(Self.user)).sorted().prefix(30))
            + [early.user, voidWins.user, releaseWins.user]
        let before = try Self.everything(db: db, rules: rules, users: users)
        for (conversion, state) in [(early, "voided"), (voidWins, "voided"), (releaseWins, "qualified")] {
            let json = try CLI.output(["explain", "--user", conversion.user, "--format", "json"] + report)
            #expect(json.contains(#""state":"\#(state)""#), "\(conversion.id): \(json)")
        }

        // rebuild leaves every report byte-identical, and verify still passes.
        #expect(try CLI.output(["rebuild", "--db", db, "--rules", rules]).contains("rebuilt"))
        #expect(try Self.everything(db: db, rules: rules, users: users) == before)
        #expect(!(try CLI.output(["verify", "--db", db, "--rules", rules])).contains("FAILED"))
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
        try FileManager.default.removeItem(atPath: daemon.socketPath)

        // Another journal, the lines shuffled, our reviews first and each tie's winner before its loser.
        var generator = SeededGenerator.announced(
            "theQuickStartShowsVoidedHeldQualifiedAndPendingMoneyWhateverTheOrder")
        let first = [later[0], later[2], later[1], later[4], later[3]]
        let second = directory.file("second.db")
        let file = directory.file("shuffled.ndjson")
        try (first + workload.shuffled(using: &generator)).map { $0 + "\n" }.joined().write(
            toFile: file, atomically: true, encoding: .utf8)
        guard
            let shuffled = try Self.ingest(
                directory, notify, db: second, rules: rules,
                { socket in
                    try CLI.run(["ingest", file, "--socket", socket])
                })
        else { return }
        #expect(try Self.everything(db: second, rules: rules, users: users) == before)
        #expect(!(try CLI.output(["verify", "--db", second, "--rules", rules])).contains("FAILED"))
        shuffled.signal(Signals.terminate)
        #expect(shuffled.waitExit() == 0)
    }

    /// The conversion a `review` line names; nil for other lines.
    static func conversionOfReview(_ line: String) -> String? {
        guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)),
            case .review(let review) = record.body
        else { return nil }
        return review.conversion
    }

    static func user(_ line: String) -> String? {
        guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else { return nil }
        return record.user
    }
}
