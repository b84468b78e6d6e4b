import AttributionJoin
import JournalSealing
import OfferTrackDomain
import SQLite
import TestSupport
import Testing
import WireFormat

@testable import JournalStore

/// An erasure whose name already has records of its own merges two users (SPEC 11), and the merged history can
/// change which `capabilities` record a presentation of a sealed day reads (rule 4.4): the sealed day's counts
/// follow, as a journal never sealed recomputes them (SPEC 12).
@Suite struct SealedMergeTests {
    /// W = 6 h and F = 2 h (K = 1 day), R = 3 days.
    static let rules = """
        {"currency":"EUR","attributionWindowHours":6,"eligibilityFreshnessHours":2,"retentionDays":3,
         "rules":[{"affiliateToken":"*","amountMinor":100}]}
        """
    /// 2026-03-01T00:00Z.
    static let start: Int64 = 1_772_323_200_000
    static let minute: Int64 = 60_000
    static let name = Erasure.name(erasureID: "E1")

    static func head(_ id: String, _ minutes: Int64, _ user: String) -> String {
        #""id":"\#(id)","ts":"\#(Timestamp.format(start + minutes * minute))","user":"\#(user)""#
    }

    /// A check: `capabilities` 2 decides `eligible`, 1 (playback) does not.
    static func check(_ id: String, _ minutes: Int64, _ user: String, capabilities: Int) -> String {
        #"{"type":"capabilities",\#(head(id, minutes, user)),"authorization":3,"capabilities":\#(capabilities)}"#
    }

    static func presented(_ id: String, _ minutes: Int64, _ user: String, affiliate: String) -> String {
        #"{"type":"offer.presented",\#(head(id, minutes, user)),"offer":{"action":"subscribe","affiliateToken":"\#(affiliate)"}}"#
    }

    /// Day 0, by hand (F = 120 min). Apart: p (m, 60) reads m's check at 0, playback: not eligible; q and s (the
    /// name's, 90 and 110) read its check at 30: eligible. Merged: p reads the name's check at 30 (eligible), q
    /// still reads it, s reads m's check at 100 (playback): a1 0 → 1 eligible, a2 stays 1, a3 1 → 0.
    static let dayZero = [
        check("m0", 0, "m", capabilities: 1),
        check("n30", 30, name, capabilities: 2),
        presented("p60", 60, "m", affiliate: "a1"),
        presented("q90", 90, name, affiliate: "a2"),
        check("m100", 100, "m", capabilities: 1),
        presented("s110", 110, name, affiliate: "a3"),
    ]

    /// Presented and eligible per affiliate over the whole journal.
    static func counts(_ path: String, rules: RulesFile) throws -> [String: [Int]] {
        let rows = try FunnelQuery.rows(
            try ReadOnlyJournal(path: path), grouping: .affiliate, range: .all, rules: rules.rules,
            asOf: start + 30 * Timestamp.millisecondsPerDay)
        var counts: [String: [Int]] = [:]
        for row in rows { if let key = row.key { counts[key] = [row.presented, row.presentedEligible] } }
        return counts
    }

    @Test func aMergeAfterTheSealRecountsTheSealedDaysEligibility() throws {
        let rules = try RulesFile(bytes: Array(Self.rules.utf8))
        let retention = try #require(rules.rules.retention)
        let scratch = ScratchDirectory("sealed-merge")
        let paths = [scratch.path + "/plain.db", scratch.path + "/sealed.db"]
        let writers = try paths.map {
            try JournalWriter(path: $0, durability: .normal, schema: .migrate, settings: rules.rules.settings)
        }
        for writer in writers {
            _ = try writer.append(try Self.dayZero.map(JournalRecordLines.submission), receivedAt: 0)
        }
        // Sealed at day 5: days 0 and 1 sealed, the horizon 00:00Z of day 3.
        let outcome = try JournalSealer(path: paths[1]).seal(
            retention: retention, asOf: Self.start + 5 * Timestamp.millisecondsPerDay)
        let dayZero = Self.start / Timestamp.millisecondsPerDay
        #expect(outcome.sealedDays == dayZero...(dayZero + 1))
        // Their rows leave `records` (the journal's last one waits for the next seal), kept as index entries.
        let rows = try Connection(path: paths[1], mode: .readOnly).scalarInt("SELECT count(*) FROM records")
        #expect(rows == 1)
        let apart = ["a1": [1, 0], "a2": [1, 1], "a3": [1, 1]]
        #expect(try Self.counts(paths[0], rules: rules) == apart)
        #expect(try Self.counts(paths[1], rules: rules) == apart)
        // On day 4, m's erasure names m's records `erased:E1`, which has records of its own.
        let erasure = #"{"type":"erasure",\#(Self.head("E1", 4 * 1440, "m")),"ticket":"DSR-1"}"#
        for writer in writers {
            let outcomes = try writer.append([try JournalRecordLines.submission(erasure)], receivedAt: 0)
            #expect(outcomes.allSatisfy { $0.isJournaled })
        }
        let merged = ["a1": [1, 1], "a2": [1, 1], "a3": [1, 0]]
        #expect(try Self.counts(paths[0], rules: rules) == merged)
        #expect(try Self.counts(paths[1], rules: rules) == merged)
    }
}
