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
            var foundBySealedRecord = false
            if let recordId {
                let owner = try connection.prepare("SELECT user, ts, type FROM records WHERE id = ?1")
                try owner.bind(recordId, at: 1)
                defer { owner.reset() }
                if try owner.step() {
                    found = owner.text(0)
                    let sealedBefore = try SealState.read(on: connection)?.sealedBefore ?? .min
                    foundBySealedRecord = owner.int64(1) < sealedBefore && RecordColumnCodes.isSealable(owner.int64(2))
                } else {
                    // A record sealing kept is its index entry alone (schema 17).
                    guard let kept = try SealedFacts.find(id: recordId, on: connection) else { return nil }
                    found = try UserKeys.name(of: kept.key, on: connection)
                    foundBySealedRecord = true
                }
            }
            guard let found, let key = try UserKeys.existingKey(of: found, on: connection) else { return nil }
            let records = try RecordQueries.records(of: found, key: key, on: connection)
            let sealed = try SealedDays.removedRecords(key: key, on: connection)
            guard !records.isEmpty || sealed > 0 else { return nil }
            return Found(
                user: found, records: records, sealedRecords: sealed, foundBySealedRecord: foundBySealedRecord)
        }
    }
}
