import AttributionJoin
import JournalStore
import OfferTrackDomain
import SQLite

/// `verify`'s checks of sealed days (SPEC 12): no raw record of a sealed day remains but reviews, erasures and the
/// records sealing keeps (`SealKeeping`), and what sealing kept agrees with the records still present.
enum SealedDaysVerifier {
    static func checks(_ connection: Connection) throws -> [JournalVerifier.Check] {
        let names = [
            "no raw record of a sealed day remains but reviews, erasures and the records sealing keeps",
            "the sealed days' presentation counts agree with each other and with the records kept",
        ]
        // Before the first seal both hold trivially: no day is sealed.
        guard let state = try SealState.read(on: connection) else {
            return names.map { JournalVerifier.Check(name: $0, problems: []) }
        }
        return [
            JournalVerifier.Check(name: names[0], problems: try unkeptRecords(connection, state)),
            JournalVerifier.Check(name: names[1], problems: try countProblems(connection, state)),
        ]
    }

    /// Records of sealed days that no rule reads any more. Those of days an interrupted seal sealed and had not yet
    /// cleaned (after `cleanedThroughDay`) are allowed: the next seal removes them, and outputs are the same.
    private static func unkeptRecords(_ connection: Connection, _ state: SealState) throws -> [String] {
        let cleanedBefore = (state.cleanedThroughDay + 1) * Timestamp.millisecondsPerDay
        let keys = try connection.prepare(
            """
            SELECT DISTINCT u.k FROM records r JOIN users u ON u.user = r.user WHERE r.ts < ?1 AND r.type < 3
            """)
        try keys.bind(cleanedBefore, at: 1)
        var users: [Int64] = []
        while try keys.step() { users.append(keys.int64(0)) }
        keys.reset()
        var problems: [String] = []
        for key in users {
            let entries = try UserIndexEntries.entries(of: key, on: connection)
            let kept = SealKeeping.kept(entries.map(\.record), sealedBefore: state.sealedBefore)
            for (position, entry) in entries.enumerated()
            where entry.record.ts < cleanedBefore && !kept.contains(position)
                && !SealKeeping.isNeverSealed(entry.record)
            {
                problems.append("record \(entry.record.id) of a sealed day is not one sealing keeps")
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
