import OfferTrackDomain
import SQLite

/// Journaling one record of a batch (SPEC 2), in the writer's transaction (`JournalWriter.append`): a new id is
/// inserted and listed in the per-user index; an id already journaled is a `duplicate` when its line has the same
/// content (`LineContent`), else an `id_conflict`; last, a record before the acceptance horizon is `expired`, and
/// after it the id of a sealed record (removed, or kept by sealing) is an `id_conflict` (SPEC 12, `SealedIDs`).
package enum RecordAppend {
    /// Journals one record and lists it under its user's key (`UserKeys.index`, keys from `freshFrom` on straight
    /// in the main level); `lastKey` carries the previous record's user and key within the batch (a user's records
    /// usually arrive together), and `userKeys` the keys of the users journaled lately (a user `knownUsers` is
    /// certain is new is given one without a search). A new record is given `seq` (the last one given, plus one:
    /// never SQLite's choice, which would give again the `seq` of records a split took out).
    package static func append(
        _ submission: Submission, seq nextSeq: Int64, receivedAt: Int64, lastKey: inout (user: String, key: Int64)?,
        freshFrom: Int64,
        userKeys: UserKeyCache, knownUsers: KnownUsers, sealed: SealedIDs?, on connection: Connection
    ) throws -> AppendOutcome {
        let record = submission.record
        if let sealed {
            // The journal first (`duplicate`, `id_conflict`), the horizon last (SPEC 2); a sealed record's id is
            // `expired` before the horizon and `id_conflict` after it.
            if record.ts < sealed.horizon {
                return try journaled(submission, sealed: sealed, on: connection) ?? .expired(horizon: sealed.horizon)
            }
            if try sealed.contains(record.id, on: connection) {
                return try journaled(submission, sealed: sealed, on: connection) ?? .conflict
            }
        }
        let insert = try connection.prepare(
            static: """
                INSERT INTO records (id, type, ts, decision, subscribed, loaded, offer_id, affiliate_token,
                    campaign_token, message_identifier, item_id, review_conversion, review_decision, review_reason,
                    review_note, user, received_at, line, seq)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)
                ON CONFLICT (id) DO NOTHING
                """)
        try RecordQueries.bindColumns(of: record, to: insert, from: 1)
        try insert.bind(record.user, at: 16)
        try insert.bind(receivedAt, at: 17)
        try insert.bindText(submission.line, at: 18)
        try insert.bind(nextSeq, at: 19)
        try insert.run()
        if connection.changes == 1 {
            let seq = nextSeq
            let kind = UserIndexKind(record.body)
            if let last = lastKey, ExactString.equals(last.user, record.user) {
                try UserKeys.index(record, seq: seq, kind: kind, key: last.key, freshFrom: freshFrom, on: connection)
            } else {
                let key = try userKeys.key(of: record.user, knownUsers: knownUsers, on: connection)
                lastKey = (record.user, key)
                try UserKeys.index(record, seq: seq, kind: kind, key: key, freshFrom: freshFrom, on: connection)
            }
            return .accepted(seq: seq)
        }
        guard let outcome = try journaled(submission, on: connection) else {
            throw SQLiteError(code: 1, message: "id \(record.id) conflicted but is not journaled", sql: insert.sql)
        }
        return outcome
    }

    /// `duplicate` or `conflict` when a record with the submission's id is journaled; nil when none is, or (with
    /// `sealed`) when it is a sealed record that sealing keeps (of a sealed day, neither a review nor an erasure):
    /// its id is then judged as a removed one's, `expired` before the horizon (SPEC 12).
    private static func journaled(
        _ submission: Submission, sealed: SealedIDs? = nil, on connection: Connection
    ) throws -> AppendOutcome? {
        let existing = try connection.prepare(static: "SELECT seq, line, ts, type FROM records WHERE id = ?1")
        try existing.bind(submission.record.id, at: 1)
        defer { existing.reset() }
        guard try existing.step() else { return nil }
        if let sealed, existing.int64(2) < sealed.sealedBefore, RecordColumnCodes.isSealable(existing.int64(3)) {
            return nil
        }
        let seq = existing.int64(0)
        return LineContent.isSame(existing.bytes(1), submission.line) ? .duplicate(seq: seq) : .conflict
    }
}
