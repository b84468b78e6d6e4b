import Foundation
import OfferTrackDomain
import SQLite
import TestSupport
import Testing

@testable import AttributionJoin
@testable import JournalStore
@testable import JournalVerification

/// A writer saves its summaries of returning users when it closes and the next one takes them (`SavedSummaries`):
/// the join after a restart must give what it gives without them, and they must never be trusted once anything
/// else may have changed the journal.
@Suite struct SavedSummariesTests {
    static let settings = RandomHistories.settings

    /// `lines` in time order (one in twenty late), in batches of random sizes: the first `firstPart` of them by one
    /// writer, the rest by a second one opened on the same journal after the first closed; `between` runs in the
    /// pause. Returns the derived tables and how many summaries the second writer took.
    static func deliverAcrossARestart(
        _ lines: [String], firstPart: Int, path: String, random: inout SeededGenerator, between: () throws -> Void
    ) throws -> (derived: [String], taken: Int?) {
        var submissions = try lines.map(JournalRecordLines.submission)
        submissions.sort { $0.record.ts < $1.record.ts }
        for index in submissions.indices.reversed() where Int.random(in: 0..<20, using: &random) == 0 {
            let late = submissions.remove(at: index)
            submissions.insert(late, at: Int.random(in: index...submissions.count, using: &random))
        }
        func append(_ part: ArraySlice<Submission>, _ writer: JournalWriter) throws {
            var rest = part
            while !rest.isEmpty {
                let batch = Array(rest.prefix(Int.random(in: 1...120, using: &random)))
                rest.removeFirst(batch.count)
                _ = try writer.append(batch, receivedAt: 0)
            }
        }
        let first = try Self.writer(path)
        try append(submissions.prefix(firstPart), first)
        first.close()
        try between()
        let second = try Self.writer(path)
        try append(submissions.dropFirst(firstPart), second)
        let failed = try JournalVerifier.verify(try ReadOnlyJournal(path: path)).filter { !$0.passed }
        #expect(failed.isEmpty, "\(failed.map { "\($0.name): \($0.problems.prefix(5))" })")
        return (try JournalRows.derived(path), second.savedSummariesTaken?.count)
    }

    /// The same random histories delivered twice across a restart, once with the summaries the first writer saved
    /// and once with them forgotten (another connection opened the journal to write), give the same derived rows.
    @Test func aRestartWithSavedSummariesJoinsAsOneWithout() throws {
        var random = SeededGenerator.announced("saved summaries")
        for _ in 0..<4 {
            let lines = RandomHistories.lines(&random, users: 40, largest: 120)
            let scratch = ScratchDirectory("saved-summaries")
            let firstPart = Int.random(in: lines.count / 4...lines.count * 3 / 4, using: &random)
            var again = random
            let kept = try Self.deliverAcrossARestart(
                lines, firstPart: firstPart, path: scratch.path + "/kept.db", random: &random, between: {})
            let forgotten = try Self.deliverAcrossARestart(
                lines, firstPart: firstPart, path: scratch.path + "/forgotten.db", random: &again,
                between: {
                    _ = try JournalOpening.open(
                        path: scratch.path + "/forgotten.db", mode: .readWrite, schema: .requireCurrent,
                        busyTimeoutMilliseconds: 1000)
                })
            #expect((kept.taken ?? 0) > 0, "the second writer took no summaries")
            #expect(forgotten.taken == nil)
            let differing = Set(kept.derived).symmetricDifference(forgotten.derived)
            #expect(
                kept.derived == forgotten.derived, "\(differing.count) rows differ: \(differing.sorted().prefix(4))")
        }
    }

    /// A writer's records: a check and a presentation for each of `users` users.
    static func journal(at path: String, users: Int) throws -> JournalWriter {
        let writer = try Self.writer(path)
        var lines: [String] = []
        for user in 0..<users {
            lines.append(JournalRecordLines.capabilities("c\(user)", user: "u\(user)", ts: "2026-11-28T10:00:00Z"))
            lines.append(JournalRecordLines.presented("p\(user)", user: "u\(user)", ts: "2026-11-28T10:01:00Z"))
        }
        _ = try writer.append(try lines.map(JournalRecordLines.submission), receivedAt: 0)
        return writer
    }

    /// A writer opening the journal at `path`, as the daemon's does at a start.
    static func writer(_ path: String) throws -> JournalWriter {
        try JournalWriter(path: path, durability: .normal, schema: .migrate, settings: Self.settings)
    }

    static func savedRows(_ path: String) throws -> Int64? {
        let connection = try Connection(path: path, mode: .readOnly)
        return try connection.scalarInt("SELECT count(*) FROM saved_summaries")
    }

    @Test func closingSavesThemAndTheNextWriterTakesThem() throws {
        let scratch = ScratchDirectory("saved-summaries-take")
        let path = scratch.path + "/j.db"
        try Self.journal(at: path, users: 30).close()
        #expect(try Self.savedRows(path) == 30)
        // The checkpointer changes no content: it leaves them.
        _ = try WALCheckpointer(path: path).checkpoint(.passive, busyTimeoutMilliseconds: 0)
        #expect(try Self.writer(path).savedSummariesTaken?.count == 30)
        // Taken is forgotten: a crash now leaves none behind.
        #expect(try Self.savedRows(path) == 0)
        #expect(try Self.writer(path).savedSummariesTaken == nil)
    }

    @Test func anyOtherConnectionThatMayWriteForgetsThem() throws {
        let scratch = ScratchDirectory("saved-summaries-forget")
        let path = scratch.path + "/j.db"
        try Self.journal(at: path, users: 5).close()
        #expect(try Self.savedRows(path) == 5)
        // Reading leaves them.
        _ = try ReadOnlyJournal(path: path)
        #expect(try Self.savedRows(path) == 5)
        // A seal, a split, `rebuild`: any command opening the journal to write.
        _ = try JournalOpening.open(
            path: path, mode: .readWrite, schema: .requireCurrent, busyTimeoutMilliseconds: 1000)
        #expect(try Self.savedRows(path) == 0)
        #expect(try Self.writer(path).savedSummariesTaken == nil)
    }

    @Test func summariesOfAJournalThatEndsElsewhereAreNotTaken() throws {
        let scratch = ScratchDirectory("saved-summaries-moved")
        let path = scratch.path + "/j.db"
        try Self.journal(at: path, users: 5).close()
        // A record appended by a connection that did not go through the journal's opening.
        let raw = try Connection(path: path, mode: .readWrite)
        try raw.execute(
            """
            INSERT INTO records (seq, id, type, ts, user, received_at, line)
                SELECT max(seq) + 1, 'raw', 0, 0, 'u0', 0, '{}' FROM records
            """)
        #expect(try Self.writer(path).savedSummariesTaken == nil)
        #expect(try Self.savedRows(path) == 0)
    }

    @Test func aWriterWhoseConnectionAnotherModuleUsedSavesNone() throws {
        let scratch = ScratchDirectory("saved-summaries-lent")
        let path = scratch.path + "/j.db"
        let writer = try Self.journal(at: path, users: 5)
        _ = try writer.currentConnection()
        writer.close()
        #expect(try Self.savedRows(path) == 0)
    }
}
