import AttributionJoin
import Fleet
import Foundation
import JournalStore
import OfferTrackDomain
import OutputFormats
import SQLite
import TestSupport
import Testing
import WireFormat

/// The fleet's export merges the central journals' rows (SPEC 10, schema 14), not their CSV bytes: over three
/// central journals (built here without NATS) it is byte for byte one daemon's export of the same records, campaign
/// tokens that need quoting included, first published and rewritten; it comes from the lines each journal stored,
/// and days published before those were stored come from their CSV.
@Suite(.serialized) struct FleetExportRowsTests {
    static let total = 4
    static let partitions = [[0, 1], [2], [3]]
    static let days = ["2026-06-01", "2026-06-02"]
    /// Every campaign token SPEC 3.2 allows that section 7 quotes (a comma, a quote; no field may hold a line break:
    /// ids, tokens and item ids have no control characters), and some that need no quoting.
    static let campaigns: [String?] = ["a,b", #"say "hi""#, #"""#, ",", #"x"",y"#, nil, "plain", #"",""#]
    static let messages: [String?] = [nil, "addMusic", "connect", "playMusic"]

    static func rules(_ amount: Int) -> String {
        #"{"currency":"USD","holdingPeriodHours":0,"rules":[{"affiliateToken":"*","amountMinor":\#(amount)},"#
            + #"{"affiliateToken":"aff-1","campaignToken":"a,b","amountMinor":\#(amount + 55)}]}"#
    }

    /// One user's check, presentation and conversion on `day`. Six users convert at each time, and conversion ids
    /// sort otherwise than users (and so than journals), so the merge's order by id decides among equal times.
    static func lines(user number: Int, day: String) -> [String] {
        let start = Timestamp.parseDay(day) ?? 0
        let user = "fleet-user-\(number)"
        let converted = start + 3_600_000 + Int64(number % 10) * 60_000
        func ts(_ at: Int64) -> String { Timestamp.format(at) }
        var offer = #""action":"subscribe","affiliateToken":"aff-\#(number % 3)""#
        if let campaign = campaigns[number % campaigns.count] {
            offer += #","campaignToken":\#(JSONStringLiteral.quote(campaign))"#
        }
        if let message = messages[number % messages.count] { offer += #","messageIdentifier":"\#(message)""# }
        if number % 3 == 0 { offer += #","itemID":"\#(1_000_000 + number)""# }
        let conversion = "conv-\((number * 7919) % 1009)-\(number)"
        return [
            #"{"type":"capabilities","id":"check-\#(number)","ts":"\#(ts(start + 60_000))","user":"\#(user)","authorization":3,"capabilities":2}"#,
            #"{"type":"offer.presented","id":"offer-\#(number)","ts":"\#(ts(start + 120_000))","user":"\#(user)","offer":{\#(offer)}}"#,
            #"{"type":"subscription.outcome","id":"\#(conversion)","ts":"\#(ts(converted))","user":"\#(user)","outcome":"subscribed"}"#,
        ]
    }

    static func void(user number: Int) -> String {
        let conversion = "conv-\((number * 7919) % 1009)-\(number)"
        return
            #"{"type":"review","id":"void-\#(number)","ts":"2026-06-02T12:00:00Z","user":"fleet-user-\#(number)","conversion":"\#(conversion)","decision":"void","reason":"refund"}"#
    }

    /// Journals at `paths` (the central ones, then one holding everything), each record in the central journal of
    /// its user's partition.
    struct Journals {
        let centrals: [String]
        let single: String
        let writers: [JournalWriter]

        init(in directory: ScratchDirectory, settings: AttributionSettings) throws {
            centrals = partitions.indices.map { directory.file("central-\($0).db") }
            single = directory.file("single.db")
            writers = try (centrals + [single]).map {
                try JournalWriter(path: $0, durability: .normal, schema: .migrate, settings: settings)
            }
            for (writer, owned) in zip(writers, partitions) {
                try writer.claim(FleetIdentity(stream: "OFFERTRACK", partitionsTotal: total))
                try writer.claim(FleetMembership(partitions: owned, total: total))
            }
        }

        /// Appends `lines` to the central journals (by partition) and to the single one.
        func append(_ lines: [String]) throws {
            let submissions = lines.map { line -> Submission in
                guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else {
                    fatalError("invalid test line \(line)")
                }
                return Submission(record: record, line: Array(line.utf8))
            }
            for (index, owned) in partitions.enumerated() {
                let mine = submissions.filter { owned.contains(Partition.of(user: $0.record.user, total: total)) }
                #expect(!mine.isEmpty, "central journal \(index) gets no records")
                let outcomes = try writers[index].append(mine, receivedAt: 0)
                #expect(outcomes.allSatisfy { if case .accepted = $0 { true } else { false } })
            }
            _ = try writers[partitions.count].append(submissions, receivedAt: 0)
        }
    }

    /// `offertrack export` of `day` over `databases` into `out`: the CSV and manifest bytes, or the refusal.
    static func export(
        _ day: String, _ databases: [String], rules: String, out: String
    ) throws -> (csv: Data, manifest: Data, outcome: Shell.Outcome) {
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let outcome = try Shell.run(
            Binaries.cli,
            ["export", "--rules", rules, "--date", day, "--out", out] + databases.flatMap { ["--db", $0] })
        let read = { (name: String) in
            (try? Data(contentsOf: URL(fileURLWithPath: "\(out)/commissions-\(day).\(name)"))) ?? Data()
        }
        return (read("csv"), read("manifest.json"), outcome)
    }

    /// The manifest without `generatedAt` (when each export ran).
    static func withoutGeneratedAt(_ manifest: Data) -> String {
        String(decoding: manifest, as: UTF8.self).components(separatedBy: ",\"generatedAt\"")[0]
    }

    static func run(of day: String) -> String { "(SELECT run FROM published_days WHERE day = '\(day)')" }

    @Test func theFleetsExportIsOneDaemonsMergedFromTheStoredLines() throws {
        let directory = ScratchDirectory("ot-fleet-rows")
        let rulesPaths = [directory.file("rules-300.json"), directory.file("rules-350.json")]
        for (path, amount) in zip(rulesPaths, [300, 350]) {
            try Self.rules(amount).write(toFile: path, atomically: true, encoding: .utf8)
        }
        let rules = try RulesFile(bytes: Array(Self.rules(300).utf8))
        let journals = try Journals(in: directory, settings: rules.rules.settings)
        try journals.append((0..<60).flatMap { Self.lines(user: $0, day: Self.days[0]) })
        var published: [(csv: Data, manifest: Data)] = []
        for (index, day) in Self.days.enumerated() {
            if index == 1 {
                // Late changes to the first day: two conversions voided (a reversal alone), and new amounts (the
                // others reversed and replaced); the second day's own conversions.
                try journals.append(
                    [Self.void(user: 4), Self.void(user: 9)]
                        + (60..<90).flatMap { Self.lines(user: $0, day: day) })
            }
            let fleet = try Self.export(
                day, journals.centrals, rules: rulesPaths[index], out: directory.file("fleet"))
            let one = try Self.export(day, [journals.single], rules: rulesPaths[index], out: directory.file("one"))
            #expect(
                fleet.outcome.status == 0 && one.outcome.status == 0, "\(fleet.outcome.output) \(one.outcome.output)")
            #expect(fleet.csv == one.csv, "\(day): the fleet's file differs from one daemon's")
            #expect(Self.withoutGeneratedAt(fleet.manifest) == Self.withoutGeneratedAt(one.manifest))
            let text = String(decoding: fleet.csv, as: UTF8.self)
            for campaign in Self.campaigns.compactMap({ $0 }) where campaign != "plain" {
                let quoted = CSVField.escape(campaign)
                #expect(quoted.hasPrefix("\"") && text.contains(",\(quoted),"), "\(day): no \(quoted) in\n\(text)")
            }
            if index == 1 {
                #expect(text.contains(",-300,USD,2026-06-01\n") && text.contains(",350,USD,2026-06-01\n"))
            }
            // Rewriting the published day gives the same bytes, with the first rules file too (the second day was
            // published under the second: the manifest keeps its rulesSha256).
            let again = try Self.export(day, journals.centrals, rules: rulesPaths[0], out: directory.file("again"))
            #expect(again.outcome.status == 0 && again.csv == fleet.csv && again.manifest == fleet.manifest)
            published.append((fleet.csv, fleet.manifest))
        }

        // The merged rows are the stored lines, not the stored CSV: the first journal's CSV of the second day
        // damaged on purpose (as a single-journal export shows), the fleet's day is still the same bytes.
        let first = try Connection(path: journals.centrals[0], mode: .readWrite)
        try first.execute(
            "UPDATE export_parts SET bytes = CAST('kind,conversion_id\nnot,a row\n' AS BLOB) WHERE run = \(Self.run(of: Self.days[1]))"
        )
        let damaged = try Self.export(
            Self.days[1], [journals.centrals[0]], rules: rulesPaths[1], out: directory.file("damaged"))
        #expect(
            damaged.outcome.status == 0
                && String(decoding: damaged.csv, as: UTF8.self).hasPrefix("kind,conversion_id\nnot"))
        let fromLines = try Self.export(
            Self.days[1], journals.centrals, rules: rulesPaths[1], out: directory.file("lines"))
        #expect(fromLines.outcome.status == 0, "\(fromLines.outcome.output)")
        #expect(fromLines.csv == published[1].csv && fromLines.manifest == published[1].manifest)

        // A stored line that does not write what the journal published is refused, naming the journal.
        let second = try Connection(path: journals.centrals[1], mode: .readWrite)
        try second.execute(
            "UPDATE export_lines SET amount_minor = amount_minor + 1 WHERE line = 0 AND run = \(Self.run(of: Self.days[1]))"
        )
        let refused = try Self.export(Self.days[1], journals.centrals, rules: rulesPaths[1], out: directory.file("bad"))
        #expect(
            refused.outcome.status == 65 && refused.outcome.output.contains(journals.centrals[1])
                && refused.outcome.output.contains("do not write the CSV its manifest hashes"),
            "\(refused.outcome.output)")

        // A line missing from those the run names is damage, refused naming the journal (not "run it again").
        try second.execute(
            "DELETE FROM export_lines WHERE line = 1 AND run = \(Self.run(of: Self.days[1]))")
        let missing = try Self.export(
            Self.days[1], journals.centrals, rules: rulesPaths[1], out: directory.file("missing"))
        #expect(
            missing.outcome.status == 65 && missing.outcome.output.contains(journals.centrals[1])
                && missing.outcome.output.contains("stored export lines of \(Self.days[1]) are damaged"),
            "\(missing.outcome.output)")

        // A day a journal published before schema 14 (its run stores no lines) is merged from its CSV instead.
        let third = try Connection(path: journals.centrals[2], mode: .readWrite)
        try third.execute(
            """
            DELETE FROM export_lines WHERE run = \(Self.run(of: Self.days[0]));
            UPDATE export_runs SET lines = NULL WHERE run = \(Self.run(of: Self.days[0]));
            """)
        let fromCSV = try Self.export(Self.days[0], journals.centrals, rules: rulesPaths[0], out: directory.file("csv"))
        #expect(fromCSV.outcome.status == 0, "\(fromCSV.outcome.output)")
        #expect(fromCSV.csv == published[0].csv && fromCSV.manifest == published[0].manifest)
    }
}
