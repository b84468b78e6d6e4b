import Foundation
import OfferTrackDomain
import Simulator
import TestSupport
import Testing
import WireFormat

@testable import AttributionJoin
@testable import JournalStore
@testable import JournalVerification

/// The report's fast path (roll-ups and derived rows) always equals recomputing attribution from the journal.
@Suite struct FunnelQueryTests {
    @Test func rollupsEqualARecomputationForEveryGroupingRangeAndRuleBoundary() throws {
        let path = "/tmp/funnel-test-\(UInt32.random(in: 0...UInt32.max)).db"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        let lines = Array(WorkloadSimulator(users: 300, seed: 21, days: 4).lines)
        var generator = SeededGenerator.announced("rollupsEqualARecomputation")
        _ = try writer.append(ExportFixtures.submissions(lines.shuffled(using: &generator)), receivedAt: 0)
        let reader = try ReadOnlyJournal(path: path)
        let start = WorkloadSimulator.defaultStart
        let hour: Int64 = 3_600_000
        // A rule that starts mid-day and one that ends mid-day: those days cannot come from the roll-ups.
        let rules = try RulesFile(
            bytes: Array(
                """
                {"currency":"USD","rules":[{"affiliateToken":"*","amountMinor":100},
                {"affiliateToken":"*","amountMinor":250,"from":"2026-11-02T13:30:00Z"},
                {"affiliateToken":"1010lKxy","amountMinor":900,"until":"2026-11-03T06:00:00Z"}]}
                """.utf8)
        ).rules
        let ranges = [
            ReportRange.all, ReportRange(since: start + 36 * hour), ReportRange(until: start + 50 * hour + 7),
            ReportRange(since: start + 5 * hour, until: start + 7 * hour),
            ReportRange(since: start + 24 * hour, until: start + 72 * hour),
            ReportRange(since: start - 1, until: start + 1),
        ]
        for grouping in ReportGrouping.allCases {
            for range in ranges {
                let fast = try FunnelQuery.rows(
                    reader, grouping: grouping, range: range, rules: rules, asOf: .max, recompute: false)
                let slow = try FunnelQuery.rows(
                    reader, grouping: grouping, range: range, rules: rules, asOf: .max, recompute: true)
                #expect(fast == slow, "by \(grouping) over \(range)")
            }
        }
        let all = try FunnelQuery.rows(reader, grouping: .day, range: .all, rules: rules, asOf: .max, recompute: false)
        #expect(all.reduce(0) { $0 + $1.commissionMinor } > 0)
    }

    /// With a holding period the roll-ups split lapsed conversions, and a day whose conversions qualify only
    /// partly by `--as-of` is read row by row: still equal to a recomputation, at every `asOf`.
    @Test func withAHoldingPeriodEveryAsOfEqualsARecomputation() throws {
        let path = "/tmp/funnel-test-\(UInt32.random(in: 0...UInt32.max)).db"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let rules = try RulesFile(
            bytes: Array(
                """
                {"currency":"USD","holdingPeriodHours":30,"rules":[{"affiliateToken":"*","amountMinor":100},
                {"affiliateToken":"1010lKxy","amountMinor":900}]}
                """.utf8)
        ).rules
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate, settings: rules.settings)
        var lines = Array(WorkloadSimulator(users: 300, seed: 22, days: 4).lines)
        // Checks without playback 0–40 h after some conversions: lapses inside and outside the 30 h.
        var generator = SimulationRandom(seed: 22)
        for submission in ExportFixtures.submissions(lines) {
            guard case .outcome(subscribed: true, _, _) = submission.record.body, generator.next() % 3 == 0 else {
                continue
            }
            let ts = submission.record.ts + Int64(generator.next() % (40 * 3_600_000))
            lines.append(ExportFixtures.lapseLine(user: submission.record.user, ts: ts, number: lines.count))
        }
        _ = try writer.append(ExportFixtures.submissions(lines.shuffled(using: &generator)), receivedAt: 0)
        let reader = try ReadOnlyJournal(path: path)
        let start = WorkloadSimulator.defaultStart
        let hour: Int64 = 3_600_000
        let asOfs = [start, start + 30 * hour, start + 54 * hour + 17, start + 80 * hour, start + 200 * hour, .max]
        var lapsed = 0
        var pendingSeen = false
        for asOf in asOfs {
            for grouping in ReportGrouping.allCases {
                for range in [ReportRange.all, ReportRange(since: start + 20 * hour, until: start + 70 * hour)] {
                    let fast = try FunnelQuery.rows(
                        reader, grouping: grouping, range: range, rules: rules, asOf: asOf, recompute: false)
                    let slow = try FunnelQuery.rows(
                        reader, grouping: grouping, range: range, rules: rules, asOf: asOf, recompute: true)
                    #expect(fast == slow, "by \(grouping) over \(range) as of \(asOf)")
                    lapsed = max(lapsed, fast.reduce(0) { $0 + $1.lapsed })
                    pendingSeen = pendingSeen || fast.contains { $0.pending > 0 }
                }
            }
        }
        #expect(lapsed > 0 && pendingSeen)
        #expect(try JournalVerifier.verify(reader).allSatisfy(\.passed))
    }
}
