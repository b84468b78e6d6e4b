import AttributionJoin
import Foundation
import JournalSealing
import OfferTrackDomain
import SQLite
import Simulator
import TestSupport
import Testing
import WireFormat

@testable import JournalStore

/// SPEC 12's purpose, at a small scale: a journal sent a steady flow of new and returning users and sealed every
/// night grows only by what sealing keeps, a small part of a raw record per sealed record (the pages in use, free
/// pages aside, after R, 2R and 4R days).
@Suite struct SealedJournalPlateauTests {
    /// W = 48 h and F = 24 h (K = 3 days), R = 6 days.
    static let rules = """
        {"currency":"EUR","attributionWindowHours":48,"eligibilityFreshnessHours":24,"retentionDays":6,
         "rules":[{"affiliateToken":"*","amountMinor":100}]}
        """
    static let dayMs = Timestamp.millisecondsPerDay

    /// The journal's pages in use (free pages aside), in bytes.
    static func bytesInUse(_ path: String) throws -> Int64 {
        let connection = try Connection(path: path, mode: .readOnly)
        let pages = try #require(try connection.scalarInt("PRAGMA page_count"))
        let free = try #require(try connection.scalarInt("PRAGMA freelist_count"))
        let size = try #require(try connection.scalarInt("PRAGMA page_size"))
        return Int64((pages - free) * size)
    }

    @Test func aSteadyFlowSealedNightlyPlateaus() throws {
        let rules = try RulesFile(bytes: Array(Self.rules.utf8))
        let retention = try #require(rules.rules.retention)
        let r = 6
        let flow = SteadyFlowSimulator(usersPerCohort: 160, cohortDays: 2, days: 4 * r)
        let scratch = ScratchDirectory("plateau")
        let path = scratch.path + "/journal.db"
        let writer = try JournalWriter(
            path: path, durability: .normal, schema: .migrate, settings: rules.rules.settings)
        var journaled = 0
        var bytesAfter: [Int: Int64] = [:]
        var sealedRecords: [Int: Int] = [:]
        var removed = 0
        var journaledAfterR = 0
        for (day, records) in flow.recordsByDay().enumerated() {
            for batch in stride(from: 0, to: records.count, by: 500) {
                let submissions = records[batch..<min(records.count, batch + 500)].map {
                    Submission(record: $0.record, line: Array($0.line.utf8))
                }
                journaled += try writer.append(submissions, receivedAt: 0).count { $0.isJournaled }
            }
            // The night after the day: every day older than R is sealed, in chunks of users and records only (not of
            // time), so that the pages, and the figures below, are the same on any machine.
            let night = flow.start + Int64(day + 1) * Self.dayMs + 3_600_000
            removed += try JournalSealer(path: path, chunkMilliseconds: 3_600_000).seal(
                retention: retention, asOf: night
            )
            .recordsRemoved
            if day + 1 == r { journaledAfterR = journaled }
            if day + 1 == r || day + 1 == 2 * r || day + 1 == 4 * r {
                bytesAfter[day + 1] = try Self.bytesInUse(path)
            }
            if day + 1 == 2 * r || day + 1 == 4 * r {
                let connection = try Connection(path: path, mode: .readOnly)
                let state = try #require(try SealState.read(on: connection))
                let unsealed = try #require(
                    try connection.scalarInt("SELECT count(*) FROM records WHERE ts >= \(state.sealedBefore)"))
                sealedRecords[day + 1] = journaled - Int(unsealed)
            }
        }
        let early = try #require(bytesAfter[r])
        let middle = try #require(bytesAfter[2 * r])
        let late = try #require(bytesAfter[4 * r])
        // Before any seal removed a record: what a raw record costs, all tables included.
        let rawRecord = Double(early) / Double(max(1, journaledAfterR))
        let keptPerSealed =
            Double(late - middle) / Double(try #require(sealedRecords[4 * r]) - (try #require(sealedRecords[2 * r])))
        let growth = Double(late) / Double(middle)
        print(
            "plateau: \(journaled) records, \(removed) removed; bytes in use after R, 2R, 4R days: \(early), \(middle), "
                + "\(late) (\(growth)×); a raw record ~\(Int(rawRecord)) bytes, kept per sealed record \(Int(keptPerSealed))"
        )
        let sealed = try #require(sealedRecords[4 * r])
        #expect(removed > sealed / 3, "\(removed) of \(sealed) sealed records removed")
        // What sealing keeps is index entries in a level of their own with sealed bodies (schema 21), not records:
        // 56–58 bytes a sealed record against 481 here (85 when they sat in `by_user` with text bodies), and
        // 1.198–1.205× in three runs (1.29× then; the pages a run's checkpoints free and reuse differ by a few), about
        // the 1.2× at this scale; its 5 % is not met by this traffic, where most users never convert and
        // every loaded presentation of theirs stays for an `offerId` (bench/RESULTS.md: 1.28× at the bench's scale).
        #expect(keptPerSealed <= rawRecord * 0.13, "kept \(keptPerSealed) bytes a sealed record, raw \(rawRecord)")
        #expect(growth <= 1.22, "after 4R days \(late) bytes, after 2R \(middle): \(growth)×")
    }
}
