import Foundation
import OfferTrackDomain
import Posix
import SQLite
import Simulator
import TestSupport
import WireFormat

/// Section 5: what `offertrack report` and `offertrack export` cost on large journals, timed as whole CLI runs.
enum QueryCost {
    /// A rules file with a rule for every token, so exports carry real amounts.
    static let rules = """
        {"currency":"USD","rules":[{"affiliateToken":"*","amountMinor":500},
        {"affiliateToken":"1010lKxy","amountMinor":700},
        {"affiliateToken":"1010lKxy","campaignToken":"spring26","amountMinor":900}]}
        """

    /// The rules the large journals are joined under and reported with: the same amounts, and a holding period
    /// of 45 days (rule 4.6), so reports count lapsed, pending and qualified conversions.
    static let holdingRules = """
        {"currency":"USD","holdingPeriodHours":1080,"rules":[{"affiliateToken":"*","amountMinor":500},
        {"affiliateToken":"1010lKxy","amountMinor":700},
        {"affiliateToken":"1010lKxy","campaignToken":"spring26","amountMinor":900}]}
        """

    /// `holdingRules`' windows, which `BigJournal` keeps the derived tables under.
    static var holdingSettings: AttributionSettings {
        (try? RulesFile(bytes: Array(holdingRules.utf8)).rules.settings) ?? .defaults
    }

    /// `holdingRules` with a 15-day attribution window: a SIGHUP to them recomputes every derived table.
    static func writeNarrowedRules(to path: String) throws {
        try holdingRules.replacingOccurrences(
            of: "\"holdingPeriodHours\":1080", with: "\"holdingPeriodHours\":1080,\"attributionWindowHours\":360"
        )
        .write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Writes `holdingRules` to `path`.
    static func writeHoldingRules(to path: String) throws {
        try holdingRules.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// The median wall time in ms of running the CLI with `arguments` (3 runs), from `posix_spawn` to its exit;
    /// fails unless it exits 0. (Foundation's `Process` would add ~50 ms a start here: it closes every descriptor
    /// up to the open-file limit the bench raises.)
    static func milliseconds(cli: String, _ arguments: [String], runs: Int = 3) throws -> (ms: Double, output: String) {
        var times: [Double] = []
        var output = ""
        let outputPath = NSTemporaryDirectory() + "offertrack-bench-cli-\(getpid()).out"
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        for _ in 0..<runs {
            try? FileManager.default.removeItem(atPath: outputPath)
            let start = Stopwatch.now()
            let child = try ChildProcess(
                [cli] + arguments, environment: ["PATH": "/usr/bin:/bin"], stdoutPath: outputPath,
                stderrPath: outputPath)
            let status = child.wait()
            times.append(Stopwatch.seconds(since: start) * 1000)
            output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            guard status == 0 else {
                throw BenchFailure("offertrack \(arguments.joined(separator: " ")) failed: \(output)")
            }
        }
        return (times.sorted()[times.count / 2], output)
    }

    /// Rows for `report` (by affiliate, by day as JSON, with `--as-of` inside the range) and `explain` on the
    /// journal at `path` of `records` records, joined under `holdingRules` (written to `rulesPath`).
    static func reportRows(cli: String, path: String, rulesPath: String, records: Int) throws -> [ResultRow] {
        try writeHoldingRules(to: rulesPath)
        let size = Double(Posix.CurrentProcess.fileSize(path) ?? 0) / 1_048_576
        let base = ["report", "--db", path, "--rules", rulesPath]
        let byAffiliate = try milliseconds(cli: cli, base)
        let byDay = try milliseconds(cli: cli, base + ["--by", "day", "--format", "json"])
        let partial = try milliseconds(
            cli: cli, base + ["--since", "2026-11-03T05:00:00Z", "--until", "2026-11-20T07:00:00Z"])
        // Mid-range: conversions of 2026-11-10 qualify on 2026-12-25 partly before this instant.
        let asOf = try milliseconds(cli: cli, base + ["--as-of", "2026-12-25T13:00:00Z"])
        let user =
            try Connection(path: path, mode: .readOnly).scalarText(
                "SELECT u.user FROM derived_conversions JOIN users u USING (k) WHERE lapse_id IS NOT NULL "
                    + "ORDER BY ts DESC LIMIT 1") ?? "none"
        let explain = try milliseconds(
            cli: cli, ["explain", "--db", path, "--rules", rulesPath, "--user", user, "--format", "json"])
        // What starting a process through Foundation's `Process` and reading its pipe costs by itself.
        let spawn = try milliseconds(cli: cli, ["--version"])
        let name = "\(Format.grouped(Double(records))) records"
        return [
            ResultRow(
                section: "5 Queries", name: "`report` over \(name)", value: "\(Format.fixed(byAffiliate.ms, 1)) ms",
                comparison: "median of 3, whole CLI run; journal \(Format.fixed(size, 0)) MiB; target ≤ 1 s at 10M"),
            ResultRow(
                section: "5 Queries", name: "`report --by day --format json` over \(name)",
                value: "\(Format.fixed(byDay.ms, 1)) ms", comparison: "median of 3"),
            ResultRow(
                section: "5 Queries", name: "`report` with mid-day `--since`/`--until` over \(name)",
                value: "\(Format.fixed(partial.ms, 1)) ms", comparison: "median of 3; edge days read row by row"),
            ResultRow(
                section: "5 Queries", name: "`report --as-of` inside the range over \(name)",
                value: "\(Format.fixed(asOf.ms, 1)) ms",
                comparison: "median of 3; the day qualifying partly by then read row by row; target ≤ 1 s at 10M"),
            ResultRow(
                section: "5 Queries", name: "`explain` of one (lapsed) user over \(name)",
                value: "\(Format.fixed(explain.ms, 1)) ms",
                comparison: "median of 3, whole CLI run; `offertrack --version` through the same harness "
                    + "\(Format.fixed(spawn.ms, 1)) ms; target ≤ 50 ms"),
        ]
    }

    /// One busy simulated day in a journal of its own, with `rules` beside it and a folder for its export.
    struct BusyDay {
        let path: String
        let rulesPath: String
        let out: String
        /// The day, `YYYY-MM-DD` (`BigJournal.defaultStart`'s).
        let day: String
        let records: Int

        /// `offertrack export`'s arguments for the day.
        var exportArguments: [String] { ["export", "--db", path, "--rules", rulesPath, "--date", day, "--out", out] }

        /// Commission rows in the day's exported CSV (0 before it is exported).
        var exportedRows: Int {
            let csv = (try? String(contentsOfFile: "\(out)/commissions-\(day).csv", encoding: .utf8)) ?? ""
            return max(0, csv.split(separator: "\n").count - 1)
        }

        /// Every record `users` simulated users make on one day, in a new journal `name`.db in `scratch` (its
        /// export goes to the folder `name`-exports).
        init(scratch: ScratchDirectory, users: Int, name: String = "busy-day") throws {
            path = scratch.file("\(name).db")
            records = try BigJournal.build(path: path, users: users, days: 1).count
            rulesPath = scratch.file("rules.json")
            try QueryCost.rules.write(toFile: rulesPath, atomically: true, encoding: .utf8)
            out = scratch.file("\(name)-exports")
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            day = Timestamp.formatDay(BigJournal.defaultStart)
        }
    }

    /// The first export of one busy simulated day (`users` users on one day): its time and conversion count.
    static func exportRow(cli: String, scratch: ScratchDirectory, users: Int) throws -> (ResultRow, Double, Int) {
        let busy = try BusyDay(scratch: scratch, users: users)
        // The first export publishes the day; later ones rewrite the stored bytes, so time the first.
        let first = try milliseconds(cli: cli, busy.exportArguments, runs: 1)
        let rows = busy.exportedRows
        let again = try milliseconds(cli: cli, busy.exportArguments, runs: 3)
        scratch.removeDatabase(busy.path)
        let row = ResultRow(
            section: "5 Queries",
            name: "`export` of a busy day (\(Format.grouped(Double(rows))) commission rows, "
                + "\(Format.grouped(Double(busy.records))) records)",
            value: "\(Format.fixed(first.ms, 1)) ms",
            comparison: "first publication, whole CLI run; re-export of the published day "
                + "\(Format.fixed(again.ms, 1)) ms; target ≤ 1 s for 100,000")
        return (row, first.ms, rows)
    }

    /// The first payout statement of a month whose 30 published export days hold `rows` rows (commissions and
    /// adjustments among 50 affiliates, synthesised straight into a journal as the export stores them).
    static func payoutsRow(cli: String, scratch: ScratchDirectory, rows: Int) throws -> ResultRow {
        let path = scratch.file("payout-month.db")
        var generator = SeededGenerator(seed: 71)
        let affiliates = (0..<50).map { "aff-\($0)" }
        var files: [(day: String, csv: [UInt8])] = []
        var bytes = 0
        for day in PublishedDaysFixture.days(from: "2026-11-01", through: "2026-11-30") {
            let csv = PublishedDaysFixture.exportCSV(
                day: day, rows: rows / 30, affiliates: affiliates, currencies: ["USD"], using: &generator
            ).csv
            bytes += csv.count
            files.append((day, csv))
        }
        try PublishedDaysFixture.publish(files, in: path)
        let rulesPath = scratch.file("payout-rules.json")
        try #"{"currency":"USD","payoutMinimumMinor":5000,"rules":[]}"#.write(
            toFile: rulesPath, atomically: true, encoding: .utf8)
        let out = scratch.file("payouts")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let arguments = ["payouts", "--db", path, "--rules", rulesPath, "--month", "2026-11", "--out", out]
        // The first run publishes the month (reading every row); later ones rewrite the stored bytes.
        let first = try milliseconds(cli: cli, arguments, runs: 1)
        let again = try milliseconds(cli: cli, arguments, runs: 3)
        scratch.removeDatabase(path)
        return ResultRow(
            section: "5 Queries",
            name: "`payouts` of a month of 10M records' exports (\(Format.grouped(Double(rows))) rows, "
                + "\(Format.fixed(Double(bytes) / 1_048_576, 1)) MiB of CSV in 30 days)",
            value: "\(Format.fixed(first.ms, 1)) ms",
            comparison: "first publication, whole CLI run; rewrite \(Format.fixed(again.ms, 1)) ms; target < 1 s")
    }
}
