import Foundation
import OfferTrackDomain
import SQLite
import TestSupport
import Testing

@testable import AttributionJoin
@testable import JournalStore
@testable import JournalVerification

/// The join's derived tables, kept per batch (from a short history read whole, or by bounded lookups for a long
/// one), must equal `Attribution.attribute` recomputed from scratch over the journal's set of records, whatever
/// order, retries and batch boundaries delivered them in (SPEC section 4).
@Suite struct BoundedAttributionPropertyTests {
    /// Delivers `lines` shuffled, in batches of random sizes, some sent twice (retries), then checks the derived
    /// tables against a recomputation (`verify`) and the reports against the same records delivered in order.
    func deliver(
        _ lines: [String], historyLimit: Int, random: inout SeededGenerator, path: String
    ) throws -> [String] {
        let writer = try JournalWriter(
            path: path, durability: .normal, schema: .migrate, settings: RandomHistories.settings,
            tuning: .init(historyLimit: historyLimit))
        var pending = lines.shuffled(using: &random)
        while !pending.isEmpty {
            let size = min(pending.count, Int.random(in: 1...400, using: &random))
            var batch = Array(pending.prefix(size))
            pending.removeFirst(size)
            if let retry = lines.randomElement(using: &random), Int.random(in: 0..<3, using: &random) == 0 {
                batch.append(retry)
            }
            _ = try writer.append(try batch.map(JournalRecordLines.submission), receivedAt: 0)
        }
        let reader = try ReadOnlyJournal(path: path)
        let failed = try JournalVerifier.verify(reader).filter { !$0.passed }
        #expect(failed.isEmpty, "\(failed.map { "\($0.name): \($0.problems.prefix(5))" })")
        return try JournalRows.derived(path)
    }

    @Test(arguments: [0, JournalWriter.defaultHistoryLimit])
    func anyOrderAndBatchingEqualsARecomputation(historyLimit: Int) throws {
        var random = SeededGenerator.announced("bounded attribution, limit \(historyLimit)")
        for round in 0..<4 {
            let lines = RandomHistories.lines(&random, users: 8, largest: round == 3 ? 5_000 : 300)
            let scratch = ScratchDirectory("bounded-attribution")
            let shuffled = try deliver(
                lines, historyLimit: historyLimit, random: &random, path: scratch.path + "/shuffled.db")
            // The same records one at a time, in order: a second delivery with other batch boundaries.
            let writer = try JournalWriter(
                path: scratch.path + "/ordered.db", durability: .normal, schema: .migrate,
                settings: RandomHistories.settings,
                tuning: .init(historyLimit: historyLimit))
            for line in lines { _ = try writer.append([try JournalRecordLines.submission(line)], receivedAt: 0) }
            #expect(try JournalRows.derived(scratch.path + "/ordered.db") == shuffled)
            // And a rebuild from scratch.
            try writer.rebuildDerivedTables(settings: RandomHistories.settings)
            #expect(try JournalRows.derived(scratch.path + "/ordered.db") == shuffled)
            // And as apps send them.
            let inOrder = try deliverMostlyInTimeOrder(
                lines, historyLimit: historyLimit, random: &random, path: scratch.path + "/in-order.db")
            #expect(inOrder == shuffled)
        }
    }

    /// Delivers `lines` as apps send them: in time order (so most batches join a returning user from the writer's
    /// summary of them, `UserSummaries`), about one in twenty late, some sent twice, in batches of random sizes;
    /// then checks the derived tables against a recomputation (`verify`).
    func deliverMostlyInTimeOrder(
        _ lines: [String], historyLimit: Int, random: inout SeededGenerator, path: String
    ) throws -> [String] {
        var submissions = try lines.map(JournalRecordLines.submission)
        submissions.sort { $0.record.ts < $1.record.ts }
        for index in submissions.indices.reversed() where Int.random(in: 0..<20, using: &random) == 0 {
            let late = submissions.remove(at: index)
            submissions.insert(late, at: Int.random(in: index...submissions.count, using: &random))
        }
        let writer = try JournalWriter(
            path: path, durability: .normal, schema: .migrate, settings: RandomHistories.settings,
            tuning: .init(historyLimit: historyLimit))
        while !submissions.isEmpty {
            var batch = Array(submissions.prefix(Int.random(in: 1...200, using: &random)))
            submissions.removeFirst(batch.count)
            if let retry = batch.randomElement(using: &random), Int.random(in: 0..<4, using: &random) == 0 {
                batch.append(retry)
            }
            _ = try writer.append(batch, receivedAt: 0)
        }
        let failed = try JournalVerifier.verify(try ReadOnlyJournal(path: path)).filter { !$0.passed }
        #expect(failed.isEmpty, "\(failed.map { "\($0.name): \($0.problems.prefix(5))" })")
        return try JournalRows.derived(path)
    }
}

extension BoundedAttributionPropertyTests {
    /// Rule 4.0 under a rules reload: a list that adds one id and removes another recomputes both users.
    @Test func aChangedSharedUsersListRecomputesLikeChangedWindows() throws {
        let scratch = ScratchDirectory("shared-reload")
        var settings = AttributionSettings.defaults
        settings.sharedUsers = SharedUsers(["Kiosk"])
        let writer = try JournalWriter(
            path: scratch.path + "/j.db", durability: .normal, schema: .migrate, settings: settings)
        var lines: [String] = []
        for user in ["kiosk", "anonymous"] {
            lines += [
                JournalRecordLines.capabilities("c-\(user)", user: user, ts: "2026-11-28T10:00:00Z"),
                JournalRecordLines.presented("p-\(user)", user: user, ts: "2026-11-28T10:01:00Z"),
                JournalRecordLines.subscribed("o-\(user)", user: user, ts: "2026-11-28T10:02:00Z"),
            ]
        }
        _ = try writer.append(try lines.map(JournalRecordLines.submission), receivedAt: 0)
        func reasons() throws -> String? {
            try Connection(path: scratch.path + "/j.db", mode: .readOnly).scalarText(
                "SELECT group_concat(id || '=' || coalesce(reason, 'attributed'), ' ') FROM "
                    + "(SELECT id, reason FROM derived_conversions ORDER BY id)")
        }
        #expect(try reasons() == "o-anonymous=attributed o-kiosk=shared_user")
        settings.sharedUsers = SharedUsers(["anonymous"])
        #expect(try writer.adopt(settings))
        #expect(try reasons() == "o-anonymous=shared_user o-kiosk=attributed")
        #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: scratch.path + "/j.db")).allSatisfy(\.passed))
        // The same list again is no change.
        #expect(try !writer.adopt(settings))
    }
}
