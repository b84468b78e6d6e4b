import Foundation
import TestSupport
import Testing

/// `offertrack rules check FILE [--rules CURRENT] [--db PATH]`: exit 0 for a valid file and 78 for a malformed
/// one, the changes against the rules in force, and the commission per affiliate that differs, which is what
/// `report` says under each file.
@Suite struct RulesCheckTests {
    static let example = Repository.file("systemd/rules.example.json")

    /// The example rules with `1010lKxy`'s amount 725, H 720 h, the `*` rule gone and a rule for `x1` added.
    static func edited(in directory: ScratchDirectory) throws -> String {
        var text = try String(contentsOfFile: example, encoding: .utf8)
        text = text.replacingOccurrences(of: #""amountMinor": 700"#, with: #""amountMinor": 725"#)
            .replacingOccurrences(of: #""holdingPeriodHours": 1080"#, with: #""holdingPeriodHours": 720"#)
            .replacingOccurrences(
                of: #"{"affiliateToken": "*", "amountMinor": 500},"#,
                with: #"{"affiliateToken": "x1", "amountMinor": 3},"#)
        let path = directory.file("rules.new.json")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func validMalformedAndUsage() throws {
        let directory = ScratchDirectory()
        let valid = try Shell.run(Binaries.cli, ["rules", "check", Self.example])
        #expect(valid.status == 0, "\(valid.output)")
        #expect(valid.output.contains("valid: currency USD, attributionWindowHours 720"), "\(valid.output)")
        #expect(valid.output.contains("holdingPeriodHours 1080, payoutMinimumMinor 5000"), "\(valid.output)")
        // Retention as the file gives it, or absent (kept forever).
        let retained = directory.file("retained.json")
        try #"{"currency": "USD", "retentionDays": 120, "rules": []}"#.write(
            toFile: retained, atomically: true, encoding: .utf8)
        let withRetention = try Shell.run(Binaries.cli, ["rules", "check", retained])
        #expect(withRetention.output.contains("retentionDays 120, 0 rules"), "\(withRetention.output)")
        try #"{"currency": "USD", "rules": []}"#.write(toFile: retained, atomically: true, encoding: .utf8)
        let without = try Shell.run(Binaries.cli, ["rules", "check", retained])
        #expect(without.output.contains("retentionDays absent, 0 rules"), "\(without.output)")
        let bad = directory.file("bad.json")
        try #"{"currency": "USD", "rules": [{"affiliateToken": "*", "amountMinor": -1}]}"#.write(
            toFile: bad, atomically: true, encoding: .utf8)
        let malformed = try Shell.run(Binaries.cli, ["rules", "check", bad])
        #expect(malformed.status == 78 && malformed.output.contains("(at rules[0].amountMinor)"), "\(malformed.output)")
        // A malformed file in force is refused too: nothing can be compared with it.
        let badCurrent = try Shell.run(Binaries.cli, ["rules", "check", Self.example, "--rules", bad])
        #expect(badCurrent.status == 78, "\(badCurrent.output)")
        #expect(try Shell.run(Binaries.cli, ["rules", "check", directory.file("missing.json")]).status == 78)
        for usage in [
            ["rules"], ["rules", "check"], ["rules", "show", Self.example], ["rules", "check", "a.json", "b.json"],
            ["rules", "check", Self.example, "--db", directory.file("x.db")],
        ] {
            let outcome = try Shell.run(Binaries.cli, usage)
            #expect(outcome.status == 64, "\(usage): \(outcome.output)")
        }
    }

    @Test func printsWhatTheFileChanges() throws {
        let directory = ScratchDirectory()
        let edited = try Self.edited(in: directory)
        let same = try Shell.run(Binaries.cli, ["rules", "check", Self.example, "--rules", Self.example])
        #expect(same.status == 0 && same.output.hasSuffix("changes from \(Self.example):\n  none\n"), "\(same.output)")
        let outcome = try Shell.run(Binaries.cli, ["rules", "check", edited, "--rules", Self.example])
        #expect(outcome.status == 0, "\(outcome.output)")
        for line in [
            "  holdingPeriodHours: 1080 -> 720\n",
            "  rules[0] added: affiliateToken x1, amountMinor 3\n",
            "  rules[1] changed: affiliateToken 1010lKxy: amountMinor 700 -> 725\n",
            "  rules[0] of the rules in force removed: affiliateToken *, amountMinor 500\n",
        ] {
            #expect(outcome.output.contains(line), "no \(line): \(outcome.output)")
        }
        #expect(!outcome.output.contains("recomputes"), "the windows did not change: \(outcome.output)")
    }

    /// The commission lines are `report --format json`'s totals per affiliate under each file.
    @Test func theCommissionThatDiffersIsWhatReportSaysUnderEachFile() throws {
        let directory = ScratchDirectory()
        guard
            let daemon = try IngestedDaemon.simulated(
                in: directory, rulesPath: Self.example, "--users 400 --start 2026-09-01 --days 45")
        else { return }
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
        let edited = try Self.edited(in: directory)
        let asOf = "2026-12-01"
        let outcome = try Shell.run(
            Binaries.cli,
            ["rules", "check", edited, "--rules", Self.example, "--db", daemon.databasePath, "--as-of", asOf])
        #expect(outcome.status == 0, "\(outcome.output)")
        func commission(_ rules: String) throws -> [String: Int64] {
            let report = try Shell.run(
                Binaries.cli,
                ["report", "--db", daemon.databasePath, "--rules", rules, "--as-of", asOf, "--format", "json"])
            let rows = try JSONSerialization.jsonObject(with: Data(report.output.utf8)) as? [[String: Any]] ?? []
            return Dictionary(
                uniqueKeysWithValues: rows.compactMap { row in
                    (row["key"] as? String).map { ($0, (row["commissionMinor"] as? NSNumber)?.int64Value ?? 0) }
                })
        }
        let before = try commission(Self.example)
        let after = try commission(edited)
        let changed = before.keys.filter { before[$0] != after[$0] }
        #expect(!changed.isEmpty, "\(before) \(after)")
        for affiliate in changed {
            let from = String(format: "%.2f", Double(before[affiliate] ?? 0) / 100)
            let to = String(format: "%.2f", Double(after[affiliate] ?? 0) / 100)
            #expect(
                outcome.output.contains("  \(affiliate): qualified \(from) -> \(to), "),
                "\(affiliate): \(outcome.output)")
        }
    }
}
