import OfferTrackDomain
import SQLite
import TestSupport
import Testing

@testable import AttributionJoin
@testable import JournalStore
@testable import JournalVerification

/// The writer's long-history hint (`longHistoryUsers`): the next batch neither plans a hinted user's group as if
/// new nor reads their history to count it. It is only a hint: a wrong one changes no derived row.
@Suite struct LongHistoryHintTests {
    static func line(_ n: Int, user: String, minute: Int) -> String {
        let ts = Timestamp.format(1_795_860_000_000 + Int64(minute) * 60_000)
        let id = "\(user)-\(n)"
        switch n % 3 {
        case 0: return JournalRecordLines.capabilities(id, user: user, ts: ts)
        case 1: return JournalRecordLines.presented(id, user: user, ts: ts)
        default: return JournalRecordLines.subscribed(id, user: user, ts: ts)
        }
    }

    /// Cases by hand: records journaled first, the batch after them (both as `(number, minute)` of one user),
    /// whether the batch's user is hinted long, and whether they are hinted after it (a returning user refreshed by
    /// lookups, hinted or with more than `defaultHistoryLimit` (16) records, in a group of at least
    /// `longGroupRecords` (16); a new user never). The batches go back in time, so that the refresh must look at the
    /// records journaled before.
    static let cases: [(name: String, earlier: [(Int, Int)], batch: [(Int, Int)], hinted: Bool, after: Bool)] = [
        ("hinted, yet new", [], (0..<20).map { ($0, 200 - $0) }, true, false),
        ("hinted, a short history, a group of 10", [(0, 100), (1, 101)], (2..<12).map { ($0, 90 - $0) }, true, false),
        ("hinted, 22 records, a group of 20", [(0, 100), (1, 101)], (2..<22).map { ($0, 90 - $0) }, true, true),
        ("not hinted, 22 records, a group of 20", [(0, 100), (1, 101)], (2..<22).map { ($0, 90 - $0) }, false, true),
        ("not hinted, 14 records, a group of 12", [(0, 100), (1, 101)], (2..<14).map { ($0, 90 - $0) }, false, false),
        ("hinted, a long history", (0..<80).map { ($0, $0) }, (80..<100).map { ($0, 100 - $0) }, true, true),
        ("not hinted, a long history", (0..<80).map { ($0, $0) }, (80..<100).map { ($0, 100 - $0) }, false, true),
        ("not hinted, new", [], (0..<20).map { ($0, $0) }, false, false),
    ]

    /// Every derived row after `earlier`, then `batch` with the hint or without.
    func rows(
        _ item: (name: String, earlier: [(Int, Int)], batch: [(Int, Int)], hinted: Bool, after: Bool), hint: Bool
    ) throws
        -> (rows: [String], longAfter: Set<ExactString>)
    {
        let scratch = ScratchDirectory("long-history-hint")
        let path = scratch.path + "/j.db"
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        func lines(_ numbers: [(Int, Int)]) throws -> [Submission] {
            // Another user in every batch, so that the plan has a group it does not skip.
            try (numbers.map { Self.line($0.0, user: "hot", minute: $0.1) } + [Self.line(1, user: "other", minute: 5)])
                .map(JournalRecordLines.submission)
        }
        if !item.earlier.isEmpty { _ = try writer.append(try lines(item.earlier), receivedAt: 0) }
        writer.caches.longHistoryUsers = hint ? [ExactString("hot")] : []
        _ = try writer.append(try lines(item.batch), receivedAt: 0)
        let failed = try JournalVerifier.verify(try ReadOnlyJournal(path: path)).filter { !$0.passed }
        #expect(failed.isEmpty, "\(item.name): \(failed.map { "\($0.name): \($0.problems.prefix(3))" })")
        return (try JournalRows.derived(path), writer.caches.longHistoryUsers)
    }

    @Test func aHintChangesNoDerivedRow() throws {
        for item in Self.cases {
            let hinted = try rows(item, hint: item.hinted)
            let plain = try rows(item, hint: false)
            #expect(hinted.rows == plain.rows, "\(item.name)")
            #expect(hinted.longAfter == (item.after ? [ExactString("hot")] : []), "\(item.name)")
        }
    }

    /// The plan leaves a skipped group unattributed and out of its roll-up, and plans the others as before.
    @Test func thePlanSkipsHintedGroups() throws {
        let batch = try ((0..<6).map { Self.line($0, user: "hot", minute: $0) } + [Self.line(1, user: "b", minute: 3)])
            .map(JournalRecordLines.submission)
        let all = BatchJoinPlan(batch: batch, settings: .defaults)
        let skipping = BatchJoinPlan(batch: batch, settings: .defaults, skipping: [ExactString("hot")])
        #expect(all.groups.map(\.isPlanned) == [true, true])
        #expect(skipping.groups.map(\.isPlanned) == [false, true])
        #expect(
            skipping.groups[0].attribution.presentations.isEmpty && skipping.groups[0].attribution.conversion == nil)
        #expect(skipping.groups[1].attribution == all.groups[1].attribution)
        var alone = DayRollup()
        DerivedTables.count(all.groups[1].attribution, sign: 1, into: &alone)
        #expect(skipping.rollup.conversions == alone.conversions)
        #expect(
            skipping.rollup.presentations.mapValues { [$0.presented, $0.eligible] }
                == alone.presentations.mapValues { [$0.presented, $0.eligible] })
        var planned = skipping.groups[0]
        BatchJoinPlan.plan(&planned, in: batch, settings: .defaults)
        #expect(planned.attribution == all.groups[0].attribution)
        #expect(planned.presentationIndices == all.groups[0].presentationIndices)
    }

    /// Users the writer's complete filter may hold (returning users) are not planned as new either: the writer
    /// refreshes them against the journal. Without a filter (not complete) every group is planned.
    @Test func thePlanSkipsUsersTheJournalMayHold() throws {
        let batch = try
            ((0..<3).map { Self.line($0, user: "back", minute: $0) } + [Self.line(1, user: "new", minute: 3)])
            .map(JournalRecordLines.submission)
        var journaled = UserFilter(expectedUsers: 10)
        _ = journaled.insert("back")
        let plan = BatchJoinPlan(batch: batch, settings: .defaults, mayBeJournaled: journaled)
        #expect(plan.groups.map(\.user) == ["back", "new"])
        #expect(plan.groups.map(\.isPlanned) == [false, true])
        #expect(BatchJoinPlan(batch: batch, settings: .defaults).groups.map(\.isPlanned) == [true, true])
        // The writer hands the plan its filter only once it is complete: on an empty journal, at once.
        let scratch = ScratchDirectory("plan-skips-journaled")
        let writer = try JournalWriter(path: scratch.path + "/j.db", durability: .normal, schema: .migrate)
        _ = try writer.append(Array(batch.prefix(1)), receivedAt: 0)
        #expect(writer.caches.knownUsers.completeFilter?.mayContain("back") == true)
        #expect(writer.caches.knownUsers.completeFilter?.mayContain("new") == false)
    }
}
