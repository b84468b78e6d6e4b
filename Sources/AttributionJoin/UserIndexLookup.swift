import JournalStore
import OfferTrackDomain
import SQLite

/// Range reads of one user's records of one kind in journal order (`(ts, id)`), over every level of the per-user
/// index (schema 11, `UserIndexLevel`): what bounded attribution (`BoundedRefresh`) asks instead of reading a whole
/// history.
///
/// Each read walks one kind's entries from a time on and stops at the first time group that holds an answer, so
/// its cost is the entries at that time (and those it is told to skip), never the user's history.
struct UserIndexLookup {
    let key: Int64
    let user: String
    let connection: Connection
    /// Entries with a `seq` at or above this are skipped (nil: none), to read the journal as it was before a batch.
    var skippingFrom: Int64?

    /// A record found, with its `seq`.
    struct Found {
        let seq: Int64
        let record: Record
    }

    /// The first record of `kinds` after `bound` in journal order (strictly; from the start when nil), or after
    /// every record at `bound.ts` with `afterTime`.
    func first(_ kinds: [UserIndexKind], after bound: RecordReference?, afterTime: Bool = false) throws -> Found? {
        var best: Found?
        for kind in kinds {
            for level in Level.allCases {
                var candidate: Found?
                try scan(kind, level, ascending: true, from: bound?.ts ?? .min) { found in
                    if let candidate, candidate.record.ts != found.record.ts { return false }
                    if let bound {
                        let after =
                            afterTime
                            ? found.record.ts > bound.ts
                            : RecordOrder.precedes(ts: bound.ts, id: bound.id, ts: found.record.ts, id: found.record.id)
                        guard after else { return true }
                    }
                    if candidate.map({ RecordOrder.precedes(found.record, $0.record) }) ?? true { candidate = found }
                    return true
                }
                if let candidate, best.map({ RecordOrder.precedes(candidate.record, $0.record) }) ?? true {
                    best = candidate
                }
            }
        }
        return best
    }

    /// The last record of `kinds` before `bound` in journal order (strictly; the very last when nil).
    func last(_ kinds: [UserIndexKind], before bound: RecordReference?) throws -> Found? {
        var best: Found?
        for kind in kinds {
            for level in Level.allCases {
                var candidate: Found?
                try scan(kind, level, ascending: false, from: bound?.ts ?? .max) { found in
                    if let candidate, candidate.record.ts != found.record.ts { return false }
                    if let bound {
                        guard RecordOrder.precedes(ts: found.record.ts, id: found.record.id, ts: bound.ts, id: bound.id)
                        else { return true }
                    }
                    if candidate.map({ RecordOrder.precedes($0.record, found.record) }) ?? true { candidate = found }
                    return true
                }
                if let candidate, best.map({ RecordOrder.precedes($0.record, candidate.record) }) ?? true {
                    best = candidate
                }
            }
        }
        return best
    }

    /// Every record of `kind` after `bound` (strictly) with `ts` at most `through`, in journal order.
    func range(_ kind: UserIndexKind, after bound: RecordReference, through: Int64) throws -> [Found] {
        var found: [Found] = []
        for level in Level.allCases {
            try scan(kind, level, ascending: true, from: bound.ts) { entry in
                guard entry.record.ts <= through else { return false }
                if RecordOrder.precedes(ts: bound.ts, id: bound.id, ts: entry.record.ts, id: entry.record.id) {
                    found.append(entry)
                }
                return true
            }
        }
        return found.sorted { RecordOrder.precedes($0.record, $1.record) }
    }

    typealias Level = UserIndexLevel

    /// Visits the entries of `kind` in one level from time `from` on (ascending) or down from it, with their
    /// records, until `body` returns false. Entries `skippingFrom` excludes are not visited.
    private func scan(
        _ kind: UserIndexKind, _ level: Level, ascending: Bool, from: Int64, _ body: (Found) throws -> Bool
    ) throws {
        let statement = try connection.prepare(Self.statements(level, ascending))
        try statement.bind(key, at: 1)
        try statement.bind(kind.rawValue, at: 2)
        try statement.bind(from, at: 3)
        defer { statement.reset() }
        while try statement.step() {
            let seq = statement.int64(0)
            if let skippingFrom, seq >= skippingFrom { continue }
            guard let record = RecordQueries.indexed(from: statement, user: user, offset: 1) else { continue }
            guard try body(Found(seq: seq, record: record)) else { return }
        }
    }

    /// The reads (the entry's `seq`, `kind`, `ts` and `body`), built once: by level and direction.
    private static let statements: [[String]] = Level.allCases.map { level in
        let table = level.table
        return [true, false].map { ascending in
            let order = ascending ? "b.ts, b.seq" : "b.ts DESC, b.seq DESC"
            return "SELECT b.seq, b.kind, b.ts, b.body FROM \(table) b "
                + "WHERE b.k = ?1 AND b.kind = ?2 AND b.ts \(ascending ? ">=" : "<=") ?3 ORDER BY \(order)"
        }
    }

    private static func statements(_ level: Level, _ ascending: Bool) -> String {
        statements[Int(level.rawValue)][ascending ? 0 : 1]
    }

    /// The ascending read of `kind` in `level` from time `from` on, bound and left for the caller to step
    /// (`CheckWalk`): a statement of its own for each slot, kind and level (the SQL differs by a comment), so that
    /// several stay open at once and no other lookup, or a walk in another slot, resets them.
    func openRead(_ kind: UserIndexKind, _ level: Level, from: Int64, slot: CheckWalk.Slot) throws -> Statement {
        let sql = Self.statements(level, true) + " /* walk \(slot.rawValue) \(kind.rawValue) */"
        let statement = try connection.prepare(sql)
        try statement.bind(key, at: 1)
        try statement.bind(kind.rawValue, at: 2)
        try statement.bind(from, at: 3)
        return statement
    }

    /// The next entry of a read `openRead` opened, nil at its end; entries `skippingFrom` excludes are passed over.
    func step(_ statement: Statement) throws -> Found? {
        while try statement.step() {
            let seq = statement.int64(0)
            if let skippingFrom, seq >= skippingFrom { continue }
            guard let record = RecordQueries.indexed(from: statement, user: user, offset: 1) else { continue }
            return Found(seq: seq, record: record)
        }
        return nil
    }

    /// A presentation of this user by `id` (rule 4.2's named candidate): nil when no record has that id, or it is
    /// another user's or not an `offer.presented`.
    func presentation(id: String) throws -> Found? {
        let statement = try connection.prepare(
            static: """
                SELECT seq, id, type, ts, decision, subscribed, loaded, offer_id, affiliate_token, campaign_token,
                    message_identifier, item_id, review_conversion, review_decision, review_reason, review_note, user
                FROM records WHERE id = ?1
                """)
        try statement.bind(id, at: 1)
        defer { statement.reset() }
        guard try statement.step() else { return try keptPresentation(id: id) }
        guard let owner = statement.text(16),
            let record = RecordQueries.record(from: statement, user: user, offset: 1),
            try isOwn(owner, record, seq: statement.int64(0))
        else { return nil }
        if let skippingFrom, statement.int64(0) >= skippingFrom { return nil }
        guard case .presented = record.body else { return nil }
        return Found(seq: statement.int64(0), record: record)
    }

    /// A presentation of this user by `id` that sealing kept as its index entry alone (schema 17, SPEC 12).
    private func keptPresentation(id: String) throws -> Found? {
        guard let kept = try SealedFacts.find(id: id, on: connection), kept.key == key,
            case .presented = kept.entry.record.body
        else { return nil }
        if let skippingFrom, kept.entry.seq >= skippingFrom { return nil }
        var record = kept.entry.record
        record.user = user
        return Found(seq: kept.entry.seq, record: record)
    }

    /// Whether a record whose `user` column is `owner` is this user's: named so, or (while an erasure's rename
    /// is pending, schema 13, and the column still holds the old name) listed under this user's key.
    private func isOwn(_ owner: String, _ record: Record, seq: Int64) throws -> Bool {
        if ExactString.equals(owner, user) { return true }
        let listed = try connection.prepare(
            static: """
                SELECT EXISTS (SELECT 1 FROM by_user WHERE k = ?1 AND kind = ?2 AND ts = ?3 AND seq = ?4)
                    OR EXISTS (SELECT 1 FROM by_user_recent WHERE k = ?1 AND kind = ?2 AND ts = ?3 AND seq = ?4)
                """)
        try listed.bind(key, at: 1)
        try listed.bind(UserIndexKind(record.body).rawValue, at: 2)
        try listed.bind(record.ts, at: 3)
        try listed.bind(seq, at: 4)
        defer { listed.reset() }
        return try listed.step() && listed.int64(0) == 1
    }

    /// Rule 4.7: this user's latest `review` naming `conversion`.
    func latestReview(of conversion: String) throws -> Found? {
        let statement = try connection.prepare(
            static: """
                SELECT seq, id, type, ts, decision, subscribed, loaded, offer_id, affiliate_token, campaign_token,
                    message_identifier, item_id, review_conversion, review_decision, review_reason, review_note, user
                FROM records WHERE review_conversion = ?1
                """)
        try statement.bind(conversion, at: 1)
        defer { statement.reset() }
        var latest: Found?
        while try statement.step() {
            let seq = statement.int64(0)
            if let skippingFrom, seq >= skippingFrom { continue }
            guard let owner = statement.text(16),
                let record = RecordQueries.record(from: statement, user: user, offset: 1),
                try isOwn(owner, record, seq: seq)
            else { continue }
            if latest.map({ RecordOrder.precedes($0.record, record) }) ?? true {
                latest = Found(seq: seq, record: record)
            }
        }
        return latest
    }
}
