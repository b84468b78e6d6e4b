import Foundation
import OfferTrackDomain
import Posix
import TestSupport
import Testing

/// Reviews and rule holds after publication become adjustments (SPEC 7), through the daemon and the CLI, and the
/// conservation law holds after every export.
@Suite struct ReviewExportTests {
    static let rules = """
        {"currency":"USD","rules":[{"affiliateToken":"*","amountMinor":500},{"affiliateToken":"aff-b","amountMinor":700}]}
        """
    /// The same, with aff-a's commissions held by a rule.
    static let holdingRules = """
        {"currency":"USD","rules":[{"affiliateToken":"*","amountMinor":500},{"affiliateToken":"aff-b","amountMinor":700},
        {"affiliateToken":"aff-a","amountMinor":500,"hold":true}]}
        """
    static let day = Timestamp.millisecondsPerDay
    static let first = Timestamp.parseDay("2026-11-10") ?? 0

    static func row(
        _ kind: String, _ name: String, _ convertedAt: Int64, _ affiliate: String, _ amount: Int,
        _ original: String = ""
    )
        -> String
    {
        let converted = Timestamp.format(convertedAt)
        let presented = Timestamp.format(convertedAt - 300_000)
        return "\(kind),o-\(name),\(converted),p-\(name),\(presented),\(affiliate),,join,,\(amount),USD,\(original)"
    }

    @Test func aVoidAHoldAReleaseAndARuleHoldAfterPublicationAreAdjustments() throws {
        guard let running = try RulesDaemon(rules: Self.rules) else { return }
        let (daemon, rules, out) = (running.daemon, running.rules, running.out)
        let client = try LineClient(path: daemon.socketPath)
        let at1 = Self.first + 36_000_000
        let at2 = Self.first + 40_000_000
        let at3 = Self.first + Self.day + 36_000_000
        let at4 = Self.first + 50_000_000
        let records =
            ReviewRecords.conversion("1", at: at1, affiliate: "aff-a")
            + ReviewRecords.conversion("2", at: at2, affiliate: "aff-b")
            + ReviewRecords.conversion("3", at: at3, affiliate: "aff-a")
            + ReviewRecords.conversion("4", at: at4, affiliate: "aff-a")
        #expect(client.exchange(records).allSatisfy { $0.status == "accepted" })
        let db = daemon.databasePath
        func send(_ line: String) {
            #expect(client.exchange([line]).map(\.status) == ["accepted"], "\(line)")
        }
        var published: [String] = []
        func export(_ date: Int64, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
            let day = Timestamp.formatDay(date)
            let outcome = try CLI.run(["export", "--db", db, "--rules", rules, "--date", day, "--out", out])
            #expect(outcome.status == 0, "\(outcome.output)", sourceLocation: sourceLocation)
            published.append(day)
            // The conservation law, the expected total from the report (H = 0: a conversion qualifies on its day).
            let expected = try CLI.reportSum(
                "commissionMinor",
                [
                    "--db", db, "--rules", rules, "--by", "day", "--since", "2026-11-10", "--until",
                    Timestamp.formatDay(date + Self.day),
                ])
            #expect(try ExportFiles.totalAmount(out) == expected, "after \(day)", sourceLocation: sourceLocation)
            return try ExportFiles.rows(out, day: day)
        }
        let d10 = "2026-11-10"
        #expect(
            try export(Self.first) == [
                Self.row("commission", "1", at1, "aff-a", 500), Self.row("commission", "2", at2, "aff-b", 700),
                Self.row("commission", "4", at4, "aff-a", 500),
            ])
        // Void o-1 after publication: its reversal comes with the next day's own rows.
        send(
            ReviewRecords.review("rv-1a", user: "u-1", conversion: "o-1", "void", reason: "refund", at: at1 + Self.day))
        #expect(
            try export(Self.first + Self.day) == [
                Self.row("adjustment", "1", at1, "aff-a", -500, d10), Self.row("commission", "3", at3, "aff-a", 500),
            ])
        // Released: the row again, as an adjustment.
        send(ReviewRecords.review("rv-1b", user: "u-1", conversion: "o-1", "release", at: at1 + 2 * Self.day))
        #expect(try export(Self.first + 2 * Self.day) == [Self.row("adjustment", "1", at1, "aff-a", 500, d10)])
        // Held after publication: a reversal.
        send(
            ReviewRecords.review("rv-2a", user: "u-2", conversion: "o-2", "hold", reason: "policy", at: at2 + Self.day))
        #expect(try export(Self.first + 3 * Self.day) == [Self.row("adjustment", "2", at2, "aff-b", -700, d10)])
        // A rule now holds aff-a: o-3 and o-4 are reversed; o-1's release lifts the rule's hold too.
        try running.write(rules: Self.holdingRules)
        #expect(
            try export(Self.first + 4 * Self.day) == [
                Self.row("adjustment", "4", at4, "aff-a", -500, d10),
                Self.row("adjustment", "3", at3, "aff-a", -500, "2026-11-11"),
            ])
        // Nothing changed since: the next day carries nothing, and published days are rewritten as they were.
        #expect(try export(Self.first + 5 * Self.day) == [])
        let firstDay = try String(contentsOfFile: "\(out)/commissions-\(d10).csv", encoding: .utf8)
        #expect(try CLI.run(["export", "--db", db, "--rules", rules, "--date", d10, "--out", out]).status == 0)
        #expect(try String(contentsOfFile: "\(out)/commissions-\(d10).csv", encoding: .utf8) == firstDay)
        // The state each conversion ends in, as explain names it.
        let states = try ["1", "2", "3", "4"].map { name in
            try CLI.output(["explain", "--db", db, "--rules", rules, "--user", "u-\(name)", "--format", "json"])
        }
        #expect(states[0].contains(#""state":"qualified""#) && states[0].contains(#""decision":"release""#))
        #expect(states[1].contains(#""state":"held""#) && states[1].contains(#""reason":"policy""#))
        #expect(states[2].contains(#""state":"held""#) && states[2].contains(#""review":null"#), "\(states[2])")
        #expect(states[3].contains(#""state":"held""#) && states[3].contains(#""rule":2"#), "\(states[3])")
        running.stop()
    }
}
