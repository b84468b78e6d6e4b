import AttributionJoin
import JournalStore
import OfferTrackDomain
import PublishedLedger
import SQLite

/// `verify`'s checks of sealed days (SPEC 12): no raw record of a sealed day remains but reviews and erasures, what
/// sealing keeps of the others is what `SealKeeping` names and is found by its id, and the sealed counts agree with
/// each other and with what is kept.
enum SealedDaysVerifier {
    static func checks(_ connection: Connection) throws -> [JournalVerifier.Check] {
        let names = [
            "no raw record of a sealed day remains but reviews and erasures, and sealing kept only what rules read",
            "the sealed days' presentation counts agree with each other and with the records kept",
        ]
        // Before the first seal both hold trivially: no day is sealed.
        guard let state = try SealState.read(on: connection) else {
            return names.map { JournalVerifier.Check(name: $0, problems: []) }
        }
        return [
            JournalVerifier.Check(
                name: names[0],
                problems: try rawRecords(connection, state) + keptEntries(connection, state) + lostEntries(connection)),
            JournalVerifier.Check(name: names[1], problems: try countProblems(connection, state)),
        ]
    }

    /// Kept records whose id's hash (`sealed_ids`) names an entry that no level of the per-user index holds: a kept
    /// record lost.
    private static func lostEntries(_ connection: Connection) throws -> [String] {
        let lost =
            try connection.scalarInt(
                """
                SELECT count(*) FROM sealed_ids s WHERE s.k IS NOT NULL
                    AND NOT EXISTS (SELECT 1 FROM by_user_sealed b WHERE b.k = s.k AND b.kind IN (0, 1, 2, 3, 4, 5) AND b.ts = s.ts)
                    AND NOT EXISTS (SELECT 1 FROM by_user b WHERE b.k = s.k AND b.kind IN (0, 1, 2, 3, 4, 5) AND b.ts = s.ts)
                    AND NOT EXISTS (SELECT 1 FROM by_user_recent b WHERE b.k = s.k AND b.kind IN (0, 1, 2, 3, 4, 5) AND b.ts = s.ts)
                """) ?? 0
        return lost == 0 ? [] : ["\(lost) records sealing kept are named by their ids' hashes but listed nowhere"]
    }

    /// `records` rows of sealed days other than reviews and erasures. Those of days an interrupted seal sealed and
    /// had not yet cleaned (after `cleanedThroughDay`) are allowed: the next seal removes them, and outputs are the
    /// same; so are the journal's last row, whose `seq` the next record would otherwise be given, and on an edge the
    /// rows the stream has not acknowledged.
    private static func rawRecords(_ connection: Connection, _ state: SealState) throws -> [String] {
        let cleanedBefore = (state.cleanedThroughDay + 1) * Timestamp.millisecondsPerDay
        return try connection.allTexts(
            """
            SELECT 'record ' || id || ' of a sealed day is still a raw record' FROM records
            WHERE ts < \(cleanedBefore) AND type < 3 AND seq != (SELECT max(seq) FROM records)
                AND seq <= coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'forward_acked_seq'), seq)
            LIMIT 10
            """)
    }

    /// Index entries of sealed (and cleaned) days that no rule reads any more, kept entries that their id does not
    /// find (`SealedFacts`), and entries of those users that do not decode (`SealedEntryBody`).
    private static func keptEntries(_ connection: Connection, _ state: SealState) throws -> [String] {
        let cleanedBefore = (state.cleanedThroughDay + 1) * Timestamp.millisecondsPerDay
        let users = try connection.prepare(
            """
            SELECT k FROM by_user WHERE ts < ?1 AND kind < 6 UNION SELECT k FROM by_user_recent WHERE ts < ?1 AND kind < 6
            UNION SELECT k FROM by_user_sealed WHERE ts < ?1
            """)
        try users.bind(cleanedBefore, at: 1)
        var keys: [Int64] = []
        while try users.step() { keys.append(users.int64(0)) }
        users.reset()
        let hasRecord = try connection.prepare("SELECT 1 FROM records WHERE seq = ?1")
        let listed = try connection.prepare(
            """
            SELECT (SELECT count(*) FROM by_user WHERE k = ?1) + (SELECT count(*) FROM by_user_recent WHERE k = ?1)
                + (SELECT count(*) FROM by_user_sealed WHERE k = ?1)
            """)
        var problems: [String] = []
        for key in keys {
            let entries = try UserIndexEntries.entries(of: key, on: connection)
            // An entry whose body does not decode (one sealing rewrote has no record to be compared with) is no
            // record to any reader.
            try listed.bind(key, at: 1)
            let count = try listed.step() ? Int(listed.int64(0)) : 0
            listed.reset()
            if count != entries.count {
                problems.append("\(count - entries.count) per-user index entries of user key \(key) do not decode")
            }
            let kept = SealKeeping.kept(entries.map(\.record), sealedBefore: state.sealedBefore)
            for (position, entry) in entries.enumerated()
            where entry.record.ts < cleanedBefore && !SealKeeping.isNeverSealed(entry.record) {
                if !kept.contains(position) {
                    problems.append("record \(entry.record.id) of a sealed day is not one sealing keeps")
                } else {
                    try hasRecord.bind(entry.seq, at: 1)
                    let raw = try hasRecord.step()
                    hasRecord.reset()
                    let found = try SealedFacts.find(id: entry.record.id, on: connection)
                    if !raw, found?.key != key || found?.entry.seq != entry.seq {
                        problems.append("record \(entry.record.id) that sealing kept is not found by its id")
                    }
                }
                if problems.count >= 10 { return problems }
            }
        }
        return problems
    }

    /// Per sealed day: each grouping counts the same presentations, eligible ones among them, and at least those
    /// still journaled; no counts for a day that is not sealed.
    private static func countProblems(_ connection: Connection, _ state: SealState) throws -> [String] {
        var problems: [String] = []
        let unsealed = try connection.scalarInt(
            "SELECT count(*) FROM sealed_presentations WHERE day > ?1", binding: state.lastSealedDay)
        if let unsealed, unsealed > 0 { problems.append("\(unsealed) sealed counts for days that are not sealed") }
        let totals = try connection.prepare(
            """
            SELECT day, count(DISTINCT sum_presented), count(DISTINCT sum_eligible), max(bad) FROM (
                SELECT day, dimension, sum(presented) AS sum_presented, sum(eligible) AS sum_eligible,
                    max(eligible > presented OR eligible < 0) AS bad
                FROM sealed_presentations GROUP BY day, dimension)
            GROUP BY day HAVING count(DISTINCT sum_presented) > 1 OR count(DISTINCT sum_eligible) > 1 OR max(bad)
            """)
        while try totals.step() {
            problems.append(
                "sealed day \(Timestamp.formatDay(totals.int64(0) * Timestamp.millisecondsPerDay)): counts disagree")
        }
        totals.reset()
        let kept = try connection.prepare(
            """
            SELECT k.day, k.value, k.n, coalesce(s.presented, 0) FROM (
                SELECT \(DayRollup.daySQL) AS day, coalesce(affiliate_token, '') AS value, count(*) AS n
                FROM records WHERE type = 1 AND loaded = 1 AND ts < ?1 GROUP BY 1, 2) k
            LEFT JOIN sealed_presentations s ON s.day = k.day AND s.dimension = 0 AND s.value = k.value
            WHERE k.n > coalesce(s.presented, 0)
            """)
        try kept.bind(state.sealedBefore, at: 1)
        while try kept.step() {
            problems.append(
                "sealed day \(Timestamp.formatDay(kept.int64(0) * Timestamp.millisecondsPerDay)) counts "
                    + "\(kept.int64(3)) presentations of affiliate '\(kept.text(1) ?? "")' but keeps \(kept.int64(2))")
        }
        kept.reset()
        return problems
    }
}
