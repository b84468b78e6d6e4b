import OfferTrackDomain
import SQLite
import TestSupport
import Testing

@testable import AttributionJoin
@testable import JournalStore
@testable import JournalVerification

/// A visit's check committed behind its presentation (traffic dealt over several connections): the writer joins
/// it from the user's summary and one range read (`UserSummary.lateCheck`), and the derived rows are those of the
/// same records journaled in time order.
@Suite struct LateCheckJoinTests {
    static func check(_ id: String, _ ts: String, eligible: Bool, user: String = "u") -> String {
        #"{"type":"capabilities","id":"\#(id)","ts":"\#(ts)","user":"\#(user)","authorization":3,"capabilities":\#(eligible ? 2 : 0)}"#
    }

    /// User u's earlier visit: checked ineligible, then shown the offer.
    static let earlierVisit = [
        check("c0", "2026-11-28T08:00:00Z", eligible: false),
        JournalRecordLines.presented("p0", user: "u", ts: "2026-11-28T08:01:00Z"),
    ]

    /// `batches` journaled one transaction each; returns the writer's join counts and the derived rows, after
    /// `verify` found the derived tables equal to a recomputation.
    static func journal(_ batches: [[String]], historyLimit: Int, path: String) throws -> (
        counts: JoinCounts, rows: [String]
    ) {
        let writer = try JournalWriter(
            path: path, durability: .normal, schema: .migrate, settings: .defaults,
            tuning: .init(historyLimit: historyLimit))
        for batch in batches {
            let outcomes = try writer.append(try batch.map(JournalRecordLines.submission), receivedAt: 0)
            let journaled = outcomes.allSatisfy { $0.isJournaled }
            #expect(journaled)
        }
        let counts = writer.joinCounts
        writer.close()
        let failed = try JournalVerifier.verify(try ReadOnlyJournal(path: path)).filter { !$0.passed }
        #expect(failed.isEmpty, "\(failed.map { "\($0.name): \($0.problems.prefix(5))" })")
        return (counts, try JournalRows.derived(path))
    }

    /// An earlier visit (checked ineligible), then the next visit's presentation, then its check alone: the
    /// presentation, ineligible by the old check, becomes eligible; other users' records and an earlier
    /// presentation are left as they were.
    @Test(arguments: [0, JournalWriter.defaultHistoryLimit])
    func aLateCheckRedecidesThePresentationsAfterIt(historyLimit: Int) throws {
        let scratch = ScratchDirectory("late-check")
        let visits =
            Self.earlierVisit + [JournalRecordLines.capabilities("other", user: "v", ts: "2026-11-28T08:02:00Z")]
        let presentation = JournalRecordLines.presented("p1", user: "u", ts: "2026-11-28T12:01:00Z")
        let lateCheck = Self.check("c1", "2026-11-28T12:00:00Z", eligible: true)
        let late = try Self.journal(
            [visits, [presentation], [lateCheck]], historyLimit: historyLimit, path: scratch.path + "/late.db")
        let inOrder = try Self.journal(
            [visits, [lateCheck], [presentation]], historyLimit: historyLimit, path: scratch.path + "/in-order.db")
        #expect(late.rows == inOrder.rows)
        #expect(late.rows.contains("p1|1795867260000|1"))
        #expect(late.rows.contains("p0|1795852860000|0"))
        // The presentation from the summary, then the late check from it and one read.
        #expect(late.counts == .init(fromSummary: 1, lateChecks: 1, refreshed: 0))
        #expect(inOrder.counts == .init(fromSummary: 2, lateChecks: 0, refreshed: 0))
    }

    /// What the summary does not decide goes the long way, with the same rows as in time order: a check before
    /// the latest one, a check before the conversion, a check with another record.
    @Test(arguments: [0, JournalWriter.defaultHistoryLimit])
    func otherLateChecksAreRefreshed(historyLimit: Int) throws {
        let scratch = ScratchDirectory("late-check-refreshed")
        let first = Self.earlierVisit
        // Each case's groups refreshed: its late group's, and the conversion's before it.
        let cases: [(name: String, after: [String], late: [String], refreshed: Int)] = [
            (
                "before the latest check",
                [Self.check("c2", "2026-11-28T12:00:00Z", eligible: false)],
                [Self.check("c1", "2026-11-28T07:59:00Z", eligible: true)], 1
            ),
            (
                "before the conversion",
                [
                    JournalRecordLines.presented("p1", user: "u", ts: "2026-11-28T12:01:00Z"),
                    JournalRecordLines.subscribed("o1", user: "u", ts: "2026-11-28T12:02:00Z"),
                ],
                [Self.check("c1", "2026-11-28T12:00:00Z", eligible: true)], 2
            ),
            (
                "with another record",
                [JournalRecordLines.presented("p1", user: "u", ts: "2026-11-28T12:01:00Z")],
                [
                    Self.check("c1", "2026-11-28T12:00:00Z", eligible: true),
                    JournalRecordLines.presented("p2", user: "u", ts: "2026-11-28T12:03:00Z"),
                ], 1
            ),
        ]
        for (index, testCase) in cases.enumerated() {
            let late = try Self.journal(
                [first, testCase.after, testCase.late], historyLimit: historyLimit,
                path: scratch.path + "/late-\(index).db")
            let inOrder = try Self.journal(
                [first + testCase.after + testCase.late], historyLimit: historyLimit,
                path: scratch.path + "/in-order-\(index).db")
            #expect(late.rows == inOrder.rows, "\(testCase.name)")
            #expect(late.counts.lateChecks == 0, "\(testCase.name)")
            #expect(late.counts.refreshed == testCase.refreshed, "\(testCase.name)")
        }
    }
}
