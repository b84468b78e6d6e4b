import Foundation
import Journal
import OfferTrackDomain
import Testing

/// The commission export against a real journal: immutability, order, and the conservation law.
@Suite struct CommissionExportTests {
    let path = "/tmp/export-test-\(UInt32.random(in: 0...UInt32.max)).db"

    static func rules(_ star: Int, _ special: Int, windowHours: Int = 720) throws -> RulesFile {
        let text = """
            {"currency":"USD","attributionWindowHours":\(windowHours),"rules":[{"affiliateToken":"*","amountMinor":\(star)},
            {"affiliateToken":"1010lKxy","amountMinor":\(special)}]}
            """
        return try RulesFile(bytes: Array(text.utf8))
    }

    static func submissions(_ lines: some Sequence<String>) -> [Submission] {
        lines.compactMap { line in
            guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else { return nil }
            return Submission(record: record, line: Array(line.utf8))
        }
    }

    /// The signed amounts of a CSV's data rows.
    static func amounts(_ csv: [UInt8]) -> Int64 {
        let text = String(decoding: csv, as: UTF8.self)
        return text.split(separator: "\n").dropFirst().reduce(Int64(0)) { sum, line in
            // amount_minor is the third field from the end (currency and original_date have no commas).
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            return sum + (Int64(fields[fields.count - 3]) ?? 0)
        }
    }

    @Test func sumOfEveryFileEqualsTheCurrentTotalOfPublishedDays() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        var generator = SeededGenerator.announced("sumOfEveryFileEqualsTheCurrentTotalOfPublishedDays")
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        let days = 6
        let workload = Array(WorkloadSimulator(users: 250, seed: 11, days: days).lines).shuffled(using: &generator)
        let rulesChoices = [
            try Self.rules(500, 700), try Self.rules(400, 900), try Self.rules(0, 1000),
            try Self.rules(450, 650, windowHours: 6),
        ]
        let chunk = workload.count / days + 1
        var exported: [String: [UInt8]] = [:]
        var fileTotal: Int64 = 0
        for index in 0..<days {
            let start = index * chunk
            _ = try writer.append(Self.submissions(workload[start..<min(workload.count, start + chunk)]), receivedAt: 0)
            let day = Timestamp.formatDay(WorkloadSimulator.defaultStart + Int64(index) * 86_400_000)
            let rules = rulesChoices.randomElement(using: &generator) ?? rulesChoices[0]
            let files = try CommissionExporter.export(journalPath: path, day: day, rules: rules, now: Int64(index))
            #expect(!files.republished)
            exported[day] = files.csv
            fileTotal += Self.amounts(files.csv)
            // Conservation: every file so far sums to the published days' total computed now under these rules.
            let reader = try JournalReader(path: path)
            let byDay = try FunnelQuery.rows(reader, grouping: .day, range: .all, rules: rules.rules)
            let published = byDay.filter { row in row.key.map { exported[$0] != nil } ?? false }
            #expect(fileTotal == published.reduce(0) { $0 + $1.commissionMinor }, "after exporting \(day)")
        }
        // Published days are immutable: the same bytes, whatever came since.
        _ = try writer.append(Self.submissions(WorkloadSimulator(users: 40, seed: 12, days: 2).lines), receivedAt: 0)
        let first = Timestamp.formatDay(WorkloadSimulator.defaultStart)
        let again = try CommissionExporter.export(journalPath: path, day: first, rules: rulesChoices[1], now: 999)
        #expect(again.republished && again.csv == exported[first])
    }

    @Test func daysArePublishedInOrderWithoutGaps() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        let rules = try Self.rules(500, 700)
        _ = try CommissionExporter.export(journalPath: path, day: "2026-11-05", rules: rules, now: 1)
        #expect {
            try CommissionExporter.export(journalPath: path, day: "2026-11-07", rules: rules, now: 2)
        } throws: { "\($0)".contains("2026-11-06") }
        #expect {
            try CommissionExporter.export(journalPath: path, day: "2026-11-04", rules: rules, now: 2)
        } throws: { "\($0)".contains("earlier than the latest published day 2026-11-05") }
        let empty = try CommissionExporter.export(journalPath: path, day: "2026-11-06", rules: rules, now: 3)
        #expect(String(decoding: empty.csv, as: UTF8.self) == ExportPlan.header.joined(separator: ",") + "\n")
        let manifest = String(decoding: empty.manifest, as: UTF8.self)
        #expect(
            manifest
                == #"{"date":"2026-11-06","rows":0,"commissionMinor":0,"adjustmentMinor":0,"currency":"USD","#
                + #""sha256":"\#(SHA256.hex(of: empty.csv))","rulesSha256":"\#(rules.sha256)","#
                + #""generatedAt":"1970-01-01T00:00:00.003Z"}"# + "\n")
    }
}

extension CommissionExportTests {
    @Test func withoutARulesFileEveryRowEarnsZeroAndTheManifestSaysSo() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        _ = try writer.append(Self.submissions(WorkloadSimulator(users: 80, seed: 4, days: 1).lines), receivedAt: 0)
        let day = Timestamp.formatDay(WorkloadSimulator.defaultStart)
        let files = try CommissionExporter.export(journalPath: path, day: day, rules: .builtIn, now: 0)
        #expect(String(decoding: files.csv, as: UTF8.self).split(separator: "\n").count > 1)
        #expect(Self.amounts(files.csv) == 0)
        let manifest = String(decoding: files.manifest, as: UTF8.self)
        #expect(manifest.contains(#""rulesSha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855""#))
    }
}
