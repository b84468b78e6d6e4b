import Foundation
import OfferTrackDomain
import Testing

@testable import AttributionJoin
@testable import JournalStore

/// `JournalWriter.lastBatchUsers` (the daemon's hot-user watch and largest-user metric): each user's accepted
/// records of the last batch, counted from the join plan's groups or, for a journal that keeps no attribution,
/// from the batch itself; both the same.
@Suite struct BatchUserCountsTests {
    /// Users interleaved, one with only a repeat, one with a repeat among accepted records.
    static func lines() -> [String] {
        [
            JournalRecordLines.capabilities("a1", user: "alice"), JournalRecordLines.capabilities("b1", user: "bob"),
            JournalRecordLines.capabilities("a2", user: "alice"), JournalRecordLines.capabilities("c1", user: "carol"),
            JournalRecordLines.capabilities("b2", user: "bob"), JournalRecordLines.capabilities("a3", user: "alice"),
        ]
    }

    static func expected(_ users: [(user: String, records: Int)]) -> Bool {
        users.map(\.user) == ["alice", "bob"] && users.map(\.records) == [2, 2]
    }

    @Test func planGroupsAndTheBatchCountTheSameAcceptedRecords() throws {
        let batch = try Self.lines().map(JournalRecordLines.submission)
        // carol's only record and alice's third are repeats, bob's second is accepted.
        let outcomes: [AppendOutcome] = [
            .accepted(seq: 1), .accepted(seq: 2), .accepted(seq: 3), .duplicate(seq: 9), .accepted(seq: 4),
            .conflict,
        ]
        let plan = BatchJoinPlan(batch: batch, settings: .defaults)
        let fromPlan = BatchUserCounts.counts(groups: plan.groups, outcomes: outcomes)
        let fromBatch = BatchUserCounts.counts(batch, outcomes: outcomes)
        #expect(Self.expected(fromPlan))
        #expect(Self.expected(fromBatch))
        let none = [AppendOutcome](repeating: .duplicate(seq: 1), count: batch.count)
        #expect(BatchUserCounts.counts(groups: plan.groups, outcomes: none).isEmpty)
        #expect(BatchUserCounts.counts(batch, outcomes: none).isEmpty)
    }

    @Test(arguments: [true, false])
    func theWriterCountsEachUsersAcceptedRecords(maintainsDerivedTables: Bool) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("batch-users-\(UUID()).db").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let writer = try JournalWriter(
            path: path,
            options: .init(durability: .normal, schema: .migrate, maintainsDerivedTables: maintainsDerivedTables))
        let lines = Self.lines()
        // carol and alice's third record are journaled first, so the batch repeats them.
        _ = try writer.append([lines[3], lines[5]].map(JournalRecordLines.submission), receivedAt: 0)
        _ = try writer.append(try lines.map(JournalRecordLines.submission), receivedAt: 0)
        #expect(Self.expected(writer.lastBatchUsers))
        _ = try writer.append(try lines.map(JournalRecordLines.submission), receivedAt: 0)
        #expect(writer.lastBatchUsers.isEmpty)
    }
}
