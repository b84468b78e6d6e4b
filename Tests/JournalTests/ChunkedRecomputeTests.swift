import Foundation
import OfferTrackDomain
import SQLite
import Simulator
import TestSupport
import Testing

@testable import AttributionJoin
@testable import JournalStore
@testable import JournalVerification

/// A recompute for new windows done a chunk of users at a time between batches (a `SIGHUP` on a large journal):
/// whatever the chunk sizes and the batches in between, readers see tables consistent with the old windows until
/// the last chunk, and then tables equal to a recomputation from scratch under the new ones.
@Suite struct ChunkedRecomputeTests {
    let path = "/tmp/recompute-test-\(UInt32.random(in: 0...UInt32.max)).db"
    static let old = AttributionSettings.defaults
    static let new = AttributionSettings(windowMs: 48 * 3_600_000, freshnessMs: 12 * 3_600_000, holdingMs: 86_400_000)

    /// Simulated traffic (users come back; duplicates included), plus users whose names test the byte order the
    /// chunks follow: prefixes of one another, and non-ASCII.
    static func lines(users: Int, seed: UInt64) throws -> [Submission] {
        var lines = WorkloadSimulator(users: users, seed: seed).map(\.line)
        for (index, user) in ["u", "u-", "u-0", "é", "éa", "\u{1F3B5}", "Z"].enumerated() {
            lines.append(
                #"{"type":"capabilities","id":"edge-c\#(index)","ts":"2026-11-01T10:00:00Z","user":"\#(user)","authorization":3,"capabilities":2}"#
            )
            lines.append(
                #"{"type":"offer.presented","id":"edge-p\#(index)","ts":"2026-11-01T10:01:00Z","user":"\#(user)","offer":{"action":"subscribe","affiliateToken":"aff"}}"#
            )
            lines.append(
                #"{"type":"subscription.outcome","id":"edge-o\#(index)","ts":"2026-11-01T12:00:00Z","user":"\#(user)","outcome":"subscribed"}"#
            )
        }
        return try lines.map { try JournalRecordLines.submission($0) }
    }

    static func settings(_ path: String) throws -> AttributionSettings? {
        try DerivedTables.settings(on: Connection(path: path, mode: .readOnly))
    }

    static func everyCheckPasses(_ path: String) throws -> Bool {
        try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed)
    }

    /// Every report row of every grouping under the new windows, from the derived tables (`recompute: false`,
    /// taken only when they follow those windows: checked first) or recomputed from the journal.
    static func reports(_ path: String, recompute: Bool = false) throws -> [[ReportRow]] {
        let reader = try ReadOnlyJournal(path: path)
        let rules = CommissionRules(
            currency: "USD", settings: new,
            rules: [CommissionRule(affiliateToken: "*", campaignToken: nil, amountMinor: 500, from: nil, until: nil)])
        #expect(try recompute || settings(path) == new)
        return try ReportGrouping.allCases.map {
            try FunnelQuery.rows(reader, grouping: $0, range: .all, rules: rules, asOf: .max, recompute: recompute)
        }
    }

    @Test(arguments: [1 as UInt64, 2, 3])
    func batchesBetweenChunksEndEqualToARecomputationFromScratch(seed: UInt64) throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        var random = SeededGenerator(seed: seed)
        let submissions = try Self.lines(users: 300, seed: seed)
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate, settings: Self.old)
        let before = submissions.count * 6 / 10
        for start in stride(from: 0, to: before, by: 200) {
            _ = try writer.append(Array(submissions[start..<min(start + 200, before)]), receivedAt: 0)
        }
        #expect(try writer.beginRecompute(Self.new))
        var next = before
        var chunks = 0
        var finished = false
        while !finished || next < submissions.count {
            if !finished {
                var left = Int(random.next() % 40) + 1
                finished = try writer.continueRecompute {
                    left -= 1
                    return left == 0
                }
                chunks += 1
                if !finished {
                    // Readers keep the old windows, consistently, while the copy fills.
                    #expect(try Self.settings(path) == Self.old)
                    if chunks % 5 == 0 { #expect(try Self.everyCheckPasses(path), "after chunk \(chunks)") }
                }
            }
            if next < submissions.count {
                let count = Int(random.next() % 60) + 1
                _ = try writer.append(Array(submissions[next..<min(next + count, submissions.count)]), receivedAt: 0)
                next += count
            }
        }
        print("seed \(seed): \(chunks) chunks")
        #expect(chunks > 5, "too few chunks to interleave anything")
        #expect(try Self.settings(path) == Self.new)
        #expect(try Self.everyCheckPasses(path))
        let chunked = try Self.reports(path)
        #expect(chunked == (try Self.reports(path, recompute: true)))
        #expect(chunked.joined().contains { $0.attributed > 0 }, "nothing attributed: the comparison shows little")
        try writer.rebuildDerivedTables(settings: Self.new)
        #expect(try Self.reports(path) == chunked)
        let leftovers = try Connection(path: path, mode: .readOnly).scalarInt(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'recompute_%'")
        #expect(leftovers == 0)
    }

    @Test func aSecondReloadStartsOverAndTheOldWindowsAgainEndIt() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let submissions = try Self.lines(users: 100, seed: 7)
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate, settings: Self.old)
        _ = try writer.append(submissions, receivedAt: 0)
        #expect(try writer.beginRecompute(Self.new))
        var left = 10
        #expect(
            try !writer.continueRecompute {
                left -= 1; return left == 0
            })
        #expect(writer.recomputedUsers == 10)
        // Reloaded back to the windows the tables have: nothing to do, and the copy is dropped.
        #expect(try !writer.beginRecompute(Self.old))
        #expect(writer.recomputedUsers == nil)
        #expect(try writer.continueRecompute { false })
        #expect(try Self.settings(path) == Self.old)
        #expect(try Self.everyCheckPasses(path))
        // Started again, abandoned (a stopping daemon): the live tables are untouched; the next start (adopt)
        // drops the copy.
        #expect(try writer.beginRecompute(Self.new))
        left = 3
        #expect(
            try !writer.continueRecompute {
                left -= 1; return left == 0
            })
        writer.abandonRecompute()
        #expect(try Self.settings(path) == Self.old)
        #expect(try Self.everyCheckPasses(path))
        let reopened = try JournalWriter(path: path, durability: .normal, schema: .migrate, settings: Self.new)
        _ = reopened
        #expect(try Self.settings(path) == Self.new)
        #expect(try Self.everyCheckPasses(path))
        let leftovers = try Connection(path: path, mode: .readOnly).scalarInt(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'recompute_%'")
        #expect(leftovers == 0)
    }
}
