import Foundation
import OfferTrackDomain
import SQLite
import TestSupport
import Testing

@testable import AttributionJoin
@testable import JournalStore
@testable import JournalVerification

/// An erasure's rename continued in chunks after its batch (schema 13, `PendingRename`): in any order, batching
/// and interleaving of chunks, the same journal as a rename in one transaction; while it is pending, attribution
/// (the derived rows, checked against a recomputation) is what it would be at any other time.
@Suite struct ChunkedRenameJournalTests {
    /// The checks that compare amounts and verdicts with a recomputation: they pass while a rename is pending.
    static let attributionChecks: Set<String> = [
        "integrity_check", "derived presentations trace to loaded offer.presented records",
        "at most one conversion per user", "daily roll-ups equal the derived rows",
    ]

    @Test func chunkedRenamesGiveTheSameJournalAsOneTransaction() throws {
        var lines = (0..<90).map { ErasureLines.record($0, "r\($0)", minute: $0 * 7) }
        lines += (0..<40).map { ErasureLines.record($0, "o\($0)", minute: $0 * 5, user: "other\($0 % 3)") }
        lines += [ErasureLines.erasure("e-late", minute: 400), ErasureLines.erasure("e-early", minute: 300)]
        lines.append(ErasureLines.record(0, "under-name", minute: 999, user: "erased:e-early"))
        var random = SeededGenerator.announced("chunked erasure order")
        let scratch = ScratchDirectory("erasure-chunks")
        var reference: [String]?
        var sawPending = false
        for round in 0..<7 {
            let path = scratch.path + "/j\(round).db"
            // Round 0 renames in one transaction (the reference); the others in chunks of a few records.
            let writer = try JournalWriter(
                path: path, durability: .normal, schema: .migrate,
                tuning: .init(
                    historyLimit: round % 2 == 0 ? 0 : 64,
                    renames: round == 0 ? .init() : RenameTuning(rowsInBatch: round, rowsPerChunk: 1 + round % 4)))
            var pending = round == 0 ? lines : lines.shuffled(using: &random)
            while !pending.isEmpty {
                let size = min(pending.count, Int.random(in: 1...30, using: &random))
                _ = try writer.append(try ErasureLines.submissions(Array(pending.prefix(size))), receivedAt: 0)
                pending.removeFirst(size)
                if !(try writer.pendingRenameKeys().isEmpty) {
                    sawPending = true
                    let checks = try JournalVerifier.verify(try ReadOnlyJournal(path: path))
                    for check in checks
                    where Self.attributionChecks.contains(check.name) || check.name.hasPrefix("the derived") {
                        #expect(check.passed, "round \(round), a rename pending: \(check.name): \(check.problems)")
                    }
                    #expect(checks.contains { !$0.passed && $0.name.hasPrefix("forgotten people") })
                }
                for _ in 0..<Int.random(in: 0...2, using: &random) { _ = try writer.continuePendingRenames() }
            }
            while try writer.continuePendingRenames() {}
            let contents = try JournalRows.recordsAndDerived(path)
            #expect(!contents.contains { $0.contains(ErasureLines.person) })
            #expect(contents.filter { $0.contains(" erased:e-early ") }.count == 90 + 2 + 1)
            #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
            if let reference { #expect(contents == reference) } else { reference = contents }
        }
        #expect(sawPending)
    }

    /// A writer that migrates (the daemon's start, `rebuild`) finishes a pending rename before anything else.
    @Test func openingToMigrateFinishesAPendingRename() throws {
        let scratch = ScratchDirectory("erasure-chunks-open")
        let path = scratch.path + "/j.db"
        let lines = (0..<50).map { ErasureLines.record($0, "r\($0)", minute: $0) }
        do {
            let writer = try JournalWriter(
                path: path, durability: .normal, schema: .migrate, tuning: .init(renames: RenameTuning(rowsInBatch: 10))
            )
            _ = try writer.append(try ErasureLines.submissions(lines), receivedAt: 0)
            _ = try writer.append(
                try ErasureLines.submissions([ErasureLines.erasure("e-1", minute: 100)]), receivedAt: 0)
            #expect(try writer.pendingRenameKeys().count == 1)
            #expect(try JournalRows.recordsAndDerived(path).contains { $0.contains(ErasureLines.person) })
            let checks = try JournalVerifier.verify(try ReadOnlyJournal(path: path))
            let erasureCheck = checks.first { $0.name.hasPrefix("forgotten people") }
            #expect(erasureCheck?.problems.contains { $0.contains("is unfinished") } == true)
        }
        let reopened = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        #expect(try reopened.pendingRenameKeys().isEmpty)
        #expect(!(try JournalRows.recordsAndDerived(path).contains { $0.contains(ErasureLines.person) }))
        #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
    }

    /// While a rename is pending, the bounded join's lookups by id (an outcome's `offerId`, a conversion's reviews)
    /// find the person's records still under the old name: the derived rows are those of a rename in one
    /// transaction.
    @Test func lookupsByIdFindRecordsNotRenamedYet() throws {
        let person = ErasureLines.person
        func ts(_ minute: Int) -> String { Timestamp.format(1_795_000_000_000 + Int64(minute) * 60_000) }
        func head(_ id: String, _ minute: Int) -> String { #""id":"\#(id)","ts":"\#(ts(minute))","user":"\#(person)""# }
        var history = (0..<20).map { ErasureLines.record(0, "c\($0)", minute: $0) }
        history += [
            #"{"type":"offer.presented",\#(head("p1", 30)),"offer":{"action":"subscribe","affiliateToken":"aff1"}}"#,
            #"{"type":"offer.presented",\#(head("p2", 31)),"offer":{"action":"subscribe","affiliateToken":"aff2"}}"#,
            #"{"type":"subscription.outcome",\#(head("o1", 32)),"outcome":"subscribed","offerId":"p1"}"#,
        ]
        let later = [
            #"{"type":"review",\#(head("v1", 200)),"conversion":"o1","decision":"hold","reason":"fraud"}"#,
            #"{"type":"subscription.outcome",\#(head("o2", 33)),"outcome":"subscribed","offerId":"p1"}"#,
        ]
        let scratch = ScratchDirectory("erasure-chunks-lookups")
        var rows: [[String]] = []
        for chunked in [false, true] {
            let path = scratch.path + "/\(chunked).db"
            let writer = try JournalWriter(
                path: path, durability: .normal, schema: .migrate,
                tuning: .init(
                    historyLimit: 0, renames: chunked ? RenameTuning(rowsInBatch: 1, rowsPerChunk: 1) : .init()))
            _ = try writer.append(try ErasureLines.submissions(history), receivedAt: 0)
            _ = try writer.append(
                try ErasureLines.submissions([ErasureLines.erasure("e-1", minute: 100)]), receivedAt: 0)
            for line in later { _ = try writer.append(try ErasureLines.submissions([line]), receivedAt: 0) }
            #expect(try writer.pendingRenameKeys().isEmpty != chunked)
            // `review`'s lookup of the conversion's user names it as `users` does.
            #expect(try ReadOnlyJournal(path: path).userOfOutcome(id: "o1") == "erased:e-1")
            rows.append(try JournalRows.derived(path))
        }
        #expect(rows[0] == rows[1])
        #expect(rows[0].contains { $0.contains("erased:e-1") })
    }
}
