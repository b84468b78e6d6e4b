import Foundation
import OfferTrackDomain
import SQLite
import TestSupport
import Testing

@testable import AttributionJoin
@testable import JournalStore
@testable import JournalVerification

/// SPEC section 11 in the journal, against real SQLite files: renamed everywhere, stored nowhere, one name
/// whatever the order, duplicates still duplicates.
@Suite struct ErasureJournalTests {
    /// The person's id is in neither the database file nor its WAL once an erasure committed and a `TRUNCATE`
    /// checkpoint ran; with `secure_delete` off the renamed rows' old bytes stay in freed space.
    @Test(arguments: [true, false])
    func theOldIdIsInNoFileAfterTheErasureAndACheckpoint(secureDelete: Bool) throws {
        let scratch = ScratchDirectory("erasure-bytes")
        let path = scratch.path + "/j.db"
        let writer = try JournalWriter(
            path: path, durability: .normal, schema: .migrate, tuning: .init(secureDelete: secureDelete))
        // Other people around the person, in the same pages, and a checkpoint so the person is in the file.
        for chunk in 0..<20 {
            var lines = (0..<200).map {
                ErasureLines.record($0, "o\(chunk)-\($0)", minute: chunk * 200 + $0, user: "u\($0 % 50)")
            }
            lines += (0..<20).map { ErasureLines.record($0, "p\(chunk)-\($0)", minute: chunk * 200 + $0) }
            _ = try writer.append(try ErasureLines.submissions(lines), receivedAt: 0)
        }
        let checkpointer = WALCheckpointer(path: path)
        _ = try checkpointer.checkpoint(.truncate, busyTimeoutMilliseconds: 1000)
        #expect(try Self.fileContains(path, ErasureLines.person))
        let outcomes = try writer.append(
            try ErasureLines.submissions([ErasureLines.erasure("e1", minute: 9_000)]), receivedAt: 0)
        #expect(outcomes == [.accepted(seq: 4_401)])
        let result = try checkpointer.checkpoint(.truncate, busyTimeoutMilliseconds: 1000)
        #expect(result.isComplete)
        let found =
            try Self.fileContains(path, ErasureLines.person) || Self.fileContains(path + "-wal", ErasureLines.person)
        #expect(found == !secureDelete)
        #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
    }

    static func fileContains(_ path: String, _ text: String) throws -> Bool {
        guard let data = FileManager.default.contents(atPath: path) else { return false }
        return data.range(of: Data(text.utf8)) != nil
    }

    /// Records of the person before and after two erasures (the later one sent first), a record sent under the
    /// name, retries, a record line sent again after the erasure: in any order and batching, the same journal.
    @Test func anyOrderGivesOneNameAndTheSameJournal() throws {
        var lines = (0..<90).map { ErasureLines.record($0, "r\($0)", minute: $0 * 7) }
        lines += (0..<40).map { ErasureLines.record($0, "o\($0)", minute: $0 * 5, user: "other\($0 % 3)") }
        lines += [ErasureLines.erasure("e-late", minute: 400), ErasureLines.erasure("e-early", minute: 300)]
        lines.append(ErasureLines.record(0, "under-name", minute: 999, user: "erased:e-early"))
        var random = SeededGenerator.announced("erasure order")
        let scratch = ScratchDirectory("erasure-order")
        var reference: [String]?
        for round in 0..<6 {
            let path = scratch.path + "/j\(round).db"
            let writer = try JournalWriter(
                path: path, durability: .normal, schema: .migrate, tuning: .init(historyLimit: round % 2 == 0 ? 0 : 64))
            var pending = round == 0 ? lines : lines.shuffled(using: &random)
            while !pending.isEmpty {
                let size = min(pending.count, Int.random(in: 1...40, using: &random))
                var batch = Array(pending.prefix(size))
                pending.removeFirst(size)
                if Int.random(in: 0..<3, using: &random) == 0, let retry = lines.randomElement(using: &random) {
                    batch.append(retry)
                }
                _ = try writer.append(try ErasureLines.submissions(batch), receivedAt: 0)
            }
            // The first record's original line again: a duplicate of what is journaled, with its seq.
            let again = try writer.append(try ErasureLines.submissions([lines[0]]), receivedAt: 0)
            guard case .duplicate = again[0] else {
                Issue.record("the original line sent again answered \(again)")
                continue
            }
            let contents = try JournalRows.recordsAndDerived(path)
            #expect(!contents.contains { $0.contains(ErasureLines.person) })
            #expect(contents.filter { $0.contains(" erased:e-early ") }.count == 90 + 2 + 1)
            #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
            if let reference { #expect(contents == reference) } else { reference = contents }
        }
    }

    /// Forgetting changes no amount: the derived rows are those of the same records under the new name.
    @Test func theDerivedRowsAreTheSameUnderTheNewName() throws {
        let scratch = ScratchDirectory("erasure-rows")
        let lines = (0..<120).map { ErasureLines.record($0, "r\($0)", minute: $0 * 3) }
        let before = try JournalWriter(path: scratch.path + "/a.db", durability: .normal, schema: .migrate)
        _ = try before.append(try ErasureLines.submissions(lines), receivedAt: 0)
        let rowsBefore = try JournalRows.derived(scratch.path + "/a.db")
        _ = try before.append(try ErasureLines.submissions([ErasureLines.erasure("e9", minute: 1)]), receivedAt: 0)
        let rowsAfter = try JournalRows.derived(scratch.path + "/a.db")
        #expect(rowsAfter.map { $0.replacingOccurrences(of: "erased:e9", with: ErasureLines.person) } == rowsBefore)
        #expect(rowsAfter != rowsBefore)
    }
}

extension ErasureJournalTests {
    /// An erasure the journal does not journal (its id is taken, by another erasure or any record, or repeated in
    /// the batch) renames nobody: SPEC 2, a conflict journals nothing.
    @Test func anErasureAnsweredIdConflictChangesNothing() throws {
        let scratch = ScratchDirectory("erasure-conflict")
        let path = scratch.path + "/j.db"
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        var lines = (0..<6).map { ErasureLines.record($0, "u\($0)", minute: $0) }
        lines += (0..<6).map { ErasureLines.record($0, "v\($0)", minute: $0, user: "victim") }
        _ = try writer.append(try ErasureLines.submissions(lines), receivedAt: 0)
        #expect(
            try writer.append(try ErasureLines.submissions([ErasureLines.erasure("e1", minute: 50)]), receivedAt: 0)[0]
                != .conflict)
        let before = try JournalRows.recordsAndDerived(path)
        // The same id for another user; an app record's id; the same id twice in one batch.
        let outcomes = try writer.append(
            try ErasureLines.submissions([
                ErasureLines.erasure("e1", minute: 60, user: "victim"),
                ErasureLines.erasure("v0", minute: 61, user: "victim"),
            ]), receivedAt: 0)
        #expect(outcomes == [.conflict, .conflict])
        #expect(try JournalRows.recordsAndDerived(path) == before)
        let twice = try writer.append(
            try ErasureLines.submissions([
                ErasureLines.erasure("e2", minute: 70, user: "other"),
                ErasureLines.erasure("e2", minute: 10, user: "victim"),
            ]), receivedAt: 0)
        #expect(twice.last == .conflict)
        let connection = try Connection(path: path, mode: .readOnly)
        #expect(try connection.scalarInt("SELECT count(*) FROM records WHERE user = 'victim'") == 6)
        #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
    }

    /// An erasure sent under the name an earlier erasure gave is one more erasure of that person: an earlier one
    /// renames them again, and their later records follow.
    @Test func anErasureOfTheNameIsAnErasureOfThePerson() throws {
        let scratch = ScratchDirectory("erasure-name")
        let path = scratch.path + "/j.db"
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        _ = try writer.append(
            try ErasureLines.submissions(
                (0..<5).map { ErasureLines.record($0, "r\($0)", minute: $0) } + [ErasureLines.erasure("e5", minute: 50)]
            ),
            receivedAt: 0)
        _ = try writer.append(
            try ErasureLines.submissions([ErasureLines.erasure("e3", minute: 30, user: "erased:e5")]), receivedAt: 0)
        _ = try writer.append(try ErasureLines.submissions([ErasureLines.record(1, "late", minute: 99)]), receivedAt: 0)
        let connection = try Connection(path: path, mode: .readOnly)
        #expect(try connection.scalarInt("SELECT count(*) FROM records WHERE user = 'erased:e3'") == 5 + 2 + 1)
        #expect(try connection.scalarInt("SELECT count(*) FROM users") == 1)
        #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
    }
}
