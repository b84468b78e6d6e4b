import Foundation
import OfferTrackDomain
import Testing

@testable import Journal

/// The report's fast path (roll-ups and derived rows) always equals recomputing attribution from the journal.
@Suite struct FunnelQueryTests {
    @Test func rollupsEqualARecomputationForEveryGroupingRangeAndRuleBoundary() throws {
        let path = "/tmp/funnel-test-\(UInt32.random(in: 0...UInt32.max)).db"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        let lines = Array(WorkloadSimulator(users: 300, seed: 21, days: 4).lines)
        var generator = SeededGenerator.announced("rollupsEqualARecomputation")
        _ = try writer.append(CommissionExportTests.submissions(lines.shuffled(using: &generator)), receivedAt: 0)
        let reader = try JournalReader(path: path)
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
                    reader, grouping: grouping, range: range, rules: rules, recompute: false)
                let slow = try FunnelQuery.rows(reader, grouping: grouping, range: range, rules: rules, recompute: true)
                #expect(fast == slow, "by \(grouping) over \(range)")
            }
        }
        let all = try FunnelQuery.rows(reader, grouping: .day, range: .all, rules: rules, recompute: false)
        #expect(all.reduce(0) { $0 + $1.commissionMinor } > 0)
    }
}
