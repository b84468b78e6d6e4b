import AttributionJoin
import Foundation
import JournalStore
import OfferTrackDomain
import OutputFormats
import Publishing
import Simulator
import Testing
import WireFormat

/// The commission export against a real journal: immutability, order, and the conservation law.
@Suite struct CommissionExportTests {
    let path = "/tmp/export-test-\(UInt32.random(in: 0...UInt32.max)).db"

    @Test func sumOfEveryFileEqualsTheCurrentTotalOfPublishedDays() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = SimulationRandom(seed: seed)
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        let days = 6
        var workload = Array(WorkloadSimulator(users: 250, seed: 11, days: days).lines)
        // Late lapses: a check without playback 1 ms to 50 h after every third conversion (so how many does not
        // depend on the seed), so that holding periods of 12 to 48 h void some and not others.
        var lapses = 0
        var conversions = 0
        for submission in ExportFixtures.submissions(workload) {
            guard case .outcome(subscribed: true, _, _) = submission.record.body else { continue }
            conversions += 1
            guard conversions % 3 == 0 else { continue }
            let delay = Int64.random(in: 1...(50 * 3_600_000), using: &generator)
            workload.append(
                ExportFixtures.lapseLine(user: submission.record.user, ts: submission.record.ts + delay, number: lapses)
            )
            lapses += 1
        }
        workload.shuffle(using: &generator)
        let rulesChoices = [
            try ExportFixtures.rules(500, 700), try ExportFixtures.rules(400, 900, holdingHours: 24),
            try ExportFixtures.rules(0, 1000, holdingHours: 48),
            try ExportFixtures.rules(450, 650, windowHours: 6, holdingHours: 12),
        ]
        let chunk = workload.count / days + 1
        var exported: [String: [UInt8]] = [:]
        var fileTotal: Int64 = 0
        for index in 0..<days {
            let start = index * chunk
            _ = try writer.append(
                ExportFixtures.submissions(workload[start..<min(workload.count, start + chunk)]), receivedAt: 0)
            let day = Timestamp.formatDay(WorkloadSimulator.defaultStart + Int64(index) * Timestamp.millisecondsPerDay)
            let rules = rulesChoices.randomElement(using: &generator) ?? rulesChoices[0]
            let files = try CommissionExporter.export(
                journalPath: path, day: day, rules: rules, now: ExportFixtures.later + Int64(index))
            #expect(!files.republished)
            exported[day] = files.csv
            fileTotal += ExportFixtures.amounts(files.csv)
            // Conservation: every file so far sums to the published days' total computed now under these rules.
            let journaled = Array(workload[0..<min(workload.count, start + chunk)])
            let expected = ExportFixtures.expectedTotal(of: journaled, days: Set(exported.keys), rules: rules.rules)
            #expect(fileTotal == expected, "after exporting \(day) (seed \(seed))")
        }
        #expect(lapses > 10 && fileTotal > 0, "seed \(seed)")
        // Published days are immutable: the same bytes, whatever came since.
        _ = try writer.append(
            ExportFixtures.submissions(WorkloadSimulator(users: 40, seed: 12, days: 2).lines), receivedAt: 0)
        let first = Timestamp.formatDay(WorkloadSimulator.defaultStart)
        let again = try CommissionExporter.export(
            journalPath: path, day: first, rules: rulesChoices[1], now: ExportFixtures.later + 999)
        #expect(again.republished && again.csv == exported[first])
    }

    @Test func daysArePublishedInOrderWithoutGaps() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        let rules = try ExportFixtures.rules(500, 700)
        _ = try CommissionExporter.export(
            journalPath: path, day: "2026-11-05", rules: rules, now: ExportFixtures.later + 1)
        #expect {
            try CommissionExporter.export(
                journalPath: path, day: "2026-11-07", rules: rules, now: ExportFixtures.later + 2)
        } throws: { "\($0)".contains("2026-11-06") }
        #expect {
            try CommissionExporter.export(
                journalPath: path, day: "2026-11-04", rules: rules, now: ExportFixtures.later + 2)
        } throws: { "\($0)".contains("earlier than the latest published day 2026-11-05") }
        let empty = try CommissionExporter.export(
            journalPath: path, day: "2026-11-06", rules: rules, now: ExportFixtures.later + 3)
        #expect(String(decoding: empty.csv, as: UTF8.self) == ExportPlan.header.joined(separator: ",") + "\n")
        let manifest = String(decoding: empty.manifest, as: UTF8.self)
        #expect(
            manifest
                == #"{"date":"2026-11-06","rows":0,"commissionMinor":0,"adjustmentMinor":0,"currency":"USD","#
                + #""sha256":"\#(SHA256.hex(of: empty.csv))","rulesSha256":"\#(rules.sha256)","#
                + #""generatedAt":"2027-06-01T00:00:00.003Z"}"# + "\n")
    }
}

extension CommissionExportTests {
    @Test func withoutARulesFileEveryRowEarnsZeroAndTheManifestSaysSo() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        _ = try writer.append(
            ExportFixtures.submissions(WorkloadSimulator(users: 80, seed: 4, days: 1).lines), receivedAt: 0)
        let day = Timestamp.formatDay(WorkloadSimulator.defaultStart)
        let files = try CommissionExporter.export(
            journalPath: path, day: day, rules: .builtIn, now: ExportFixtures.later)
        #expect(String(decoding: files.csv, as: UTF8.self).split(separator: "\n").count > 1)
        #expect(ExportFixtures.amounts(files.csv) == 0)
        let manifest = String(decoding: files.manifest, as: UTF8.self)
        #expect(manifest.contains(#""rulesSha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855""#))
    }
}
