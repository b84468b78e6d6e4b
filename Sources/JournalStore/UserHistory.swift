import OfferTrackDomain
import SQLite

/// One user's journaled records, found by user or by the id of any of their records (for `offertrack explain`).
public enum UserHistory {
    /// A user's history as `explain` reads it.
    public struct Found: Sendable {
        /// The user the records are journaled under.
        public var user: String
        /// Every record of theirs the journal holds.
        public var records: [Record]
        /// How many of their records sealing removed (SPEC 12).
        public var sealedRecords: Int
        /// Whether the record the history was found by is a sealed one: of a sealed day, and neither a review nor
        /// an erasure. `explain --id` answers for it only when the explanation names it (SPEC 12).
        public var foundBySealedRecord: Bool
    }

    /// The user, all of their records and how many sealing removed, read in one snapshot; nil when the journal has
    /// no such user or record. Exactly one of `user` and `recordId` names whom to read.
    public static func read(_ reader: ReadOnlyJournal, user: String?, recordId: String?) throws -> Found? {
        let connection = reader.connection
        return try connection.readTransaction {
            var found = user
            var key: Int64?
            var foundBySealedRecord = false
            if let recordId {
                let owner = try connection.prepare("SELECT user, seq, ts, type FROM records WHERE id = ?1")
                try owner.bind(recordId, at: 1)
                defer { owner.reset() }
                if try owner.step() {
                    found = owner.text(0)
                    key = try found.flatMap { try UserKeys.existingKey(of: $0, on: connection) }
                    if key == nil, let (renamedKey, name) = try renamingOwner(ofSeq: owner.int64(1), on: connection) {
                        (key, found) = (renamedKey, name)
                    }
                    let sealedBefore = try SealState.read(on: connection)?.sealedBefore ?? .min
                    foundBySealedRecord = owner.int64(2) < sealedBefore && RecordColumnCodes.isSealable(owner.int64(3))
                } else {
                    // A record sealing kept is its index entry alone (schema 17).
                    guard let kept = try SealedFacts.find(id: recordId, on: connection) else { return nil }
                    key = kept.key
                    found = try UserKeys.name(of: kept.key, on: connection)
                    foundBySealedRecord = true
                }
            } else if let user {
                key = try UserKeys.existingKey(of: user, on: connection)
            }
            guard let found, let key else { return nil }
            let records = try RecordQueries.records(of: found, key: key, on: connection)
            let sealed = try SealedDays.removedRecords(key: key, on: connection)
            guard !records.isEmpty || sealed > 0 else { return nil }
            return Found(
                user: found, records: records, sealedRecords: sealed, foundBySealedRecord: foundBySealedRecord)
        }
    }

    /// The key and new name of the person whose erasure's rename has not reached the record `seq` yet (its `user`
    /// column still holds the old name, which names no user any more: the erasure renamed the `users` entry in its
    /// batch, `PendingRename`); nil when no pending rename lists it. Reads each pending key's index entries.
    private static func renamingOwner(ofSeq seq: Int64, on connection: Connection) throws -> (Int64, String)? {
        let find = try connection.prepare(
            """
            SELECT p.k, u.user FROM pending_renames p JOIN users u ON u.k = p.k
            WHERE EXISTS (SELECT 1 FROM by_user b WHERE b.k = p.k AND b.seq = ?1)
                OR EXISTS (SELECT 1 FROM by_user_recent b WHERE b.k = p.k AND b.seq = ?1)
            """)
        try find.bind(seq, at: 1)
        defer { find.reset() }
        guard try find.step(), let name = find.text(1) else { return nil }
        return (find.int64(0), name)
    }
}
