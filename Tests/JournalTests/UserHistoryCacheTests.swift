import OfferTrackDomain
import SQLite
import TestSupport
import Testing

@testable import Journal

/// The writer's cache of short histories (`UserHistoryCache`) must never change a derived row: a returning user's
/// join from the cache equals one that reads the journal, whatever the cache's size, and the cache empties
/// whenever what it holds may no longer be the journal's.
@Suite struct UserHistoryCacheTests {
    /// Many users with short histories (and one long one), shuffled into random batches with retries: the same
    /// derived rows with no cache, a cache that evicts after every few records, and the default one, all equal to
    /// a recomputation (`verify`, inside `deliver`).
    @Test(arguments: [JournalWriter.defaultHistoryLimit, 8])
    func anyCacheSizeGivesTheRowsOfNoCache(historyLimit: Int) throws {
        var random = SeededGenerator.announced("history cache, limit \(historyLimit)")
        for _ in 0..<3 {
            let lines = BoundedAttributionPropertyTests.lines(&random, users: 150, largest: 200)
            let scratch = ScratchDirectory("history-cache")
            var rows: [[String]] = []
            for (index, size) in [0, 3, 40, JournalWriter.defaultHistoryCacheRecords].enumerated() {
                // The same order and batches for every size: only the cache differs.
                var delivery = random
                rows.append(
                    try BoundedAttributionPropertyTests.deliver(
                        lines, historyLimit: historyLimit, random: &delivery, path: scratch.path + "/\(index).db",
                        historyCacheRecords: size))
            }
            _ = Int.random(in: 0...1, using: &random)
            #expect(rows.allSatisfy { $0 == rows[0] })
            #expect(!rows[0].isEmpty)
        }
    }

    /// Another writer appends to a user the first writer holds: the first notices (the journal's last `seq`
    /// moved) and reads the user's history again instead of joining on the one it held.
    @Test func anotherWritersRecordsAreNotMissed() throws {
        let scratch = ScratchDirectory("history-cache-two-writers")
        let path = scratch.path + "/j.db"
        let settings = AttributionSettings.defaults
        let first = try JournalWriter(path: path, durability: .normal, schema: .migrate, settings: settings)
        _ = try first.append(
            [
                try JournalWriterTests.submission(
                    JournalWriterTests.capabilities("c1", user: "u", ts: "2026-11-28T10:00:00Z"))
            ], receivedAt: 0)
        #expect(first.histories.records == 1)
        // The second writer journals the presentation the first one has not seen.
        let second = try JournalWriter(path: path, durability: .normal, settings: settings)
        _ = try second.append(
            [
                try JournalWriterTests.submission(
                    JournalWriterTests.presented("p1", user: "u", ts: "2026-11-28T10:01:00Z"))
            ],
            receivedAt: 0)
        second.close()
        _ = try first.append(
            [
                try JournalWriterTests.submission(
                    JournalWriterTests.subscribed("o1", user: "u", ts: "2026-11-28T10:02:00Z"))
            ], receivedAt: 0)
        let reason = try Connection(path: path, mode: .readOnly).scalarText(
            "SELECT coalesce(reason, 'attributed') || ' ' || coalesce(offer_id, '-') FROM derived_conversions")
        #expect(reason == "attributed p1")
        #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
    }

    /// Two generations bounded by records: the older is dropped when the newer fills up; a batch's changes count
    /// only once it commits; a new last `seq` or new settings empty it.
    @Test func generationsStagingAndSynchronizing() {
        let cache = UserHistoryCache(recordsPerGeneration: 4)
        let settings = AttributionSettings.defaults
        func entry(_ records: Int) -> UserHistoryCache.Entry {
            .init(
                records: (0..<records).map {
                    Record(id: "r\($0)", ts: 0, user: "u", body: .capabilities(.eligible))
                }, attribution: UserAttribution(presentations: [], conversion: nil))
        }
        cache.synchronize(journalLastSeq: 0, settings: settings)
        cache.stage(entry(3), for: ExactString("a"))
        #expect(cache.entry(of: ExactString("a")) == nil)
        cache.committed(lastSeq: 3)
        #expect(cache.entry(of: ExactString("a"))?.records.count == 3)
        // b does not fit beside a: a moves to the older generation, still found.
        cache.stage(entry(2), for: ExactString("b"))
        cache.committed(lastSeq: 5)
        #expect(cache.entry(of: ExactString("a")) != nil && cache.entry(of: ExactString("b")) != nil)
        // c fills the newer again: a's generation is dropped.
        cache.stage(entry(3), for: ExactString("c"))
        cache.committed(lastSeq: 8)
        #expect(cache.entry(of: ExactString("a")) == nil)
        #expect(cache.records == 5)
        // A history longer than a generation, or nil, drops the user's entry.
        cache.stage(entry(5), for: ExactString("c"))
        cache.stage(nil, for: ExactString("b"))
        cache.committed(lastSeq: 13)
        #expect(cache.entry(of: ExactString("b")) == nil && cache.entry(of: ExactString("c")) == nil)
        cache.stage(entry(1), for: ExactString("d"))
        cache.committed(lastSeq: 14)
        // The same journal and settings keep it; another last seq, other settings, or a failure empty it.
        cache.synchronize(journalLastSeq: 14, settings: settings)
        #expect(cache.entry(of: ExactString("d")) != nil)
        cache.synchronize(journalLastSeq: 15, settings: settings)
        #expect(cache.entry(of: ExactString("d")) == nil)
        cache.stage(entry(1), for: ExactString("d"))
        cache.committed(lastSeq: 16)
        var other = settings
        other.windowMs += 1
        cache.synchronize(journalLastSeq: 16, settings: other)
        #expect(cache.entry(of: ExactString("d")) == nil)
        cache.stage(entry(1), for: ExactString("d"))
        cache.forget()
        cache.committed(lastSeq: 17)
        #expect(cache.entry(of: ExactString("d")) == nil)
    }
}
