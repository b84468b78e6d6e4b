import OfferTrackDomain
import SQLite

/// One user's journaled records, found by user or by the id of any of their records (for `offertrack explain`).
public enum UserHistory {
    /// The user, all of their records and how many sealing removed (SPEC 12), read in one snapshot; nil when the
    /// journal has no such user or record. Exactly one of `user` and `recordId` names whom to read.
    public static func read(
        _ reader: ReadOnlyJournal, user: String?, recordId: String?
    ) throws -> (user: String, records: [Record], sealedRecords: Int)? {
        let connection = reader.connection
        return try connection.readTransaction {
            var found = user
            if let recordId {
                let owner = try connection.prepare("SELECT user FROM records WHERE id = ?1")
                try owner.bind(recordId, at: 1)
                defer { owner.reset() }
                found = try owner.step() ? owner.text(0) : nil
            }
            guard let found, let key = try UserKeys.existingKey(of: found, on: connection) else { return nil }
            let records = try RecordQueries.records(of: found, key: key, on: connection)
            let sealed = try SealedDays.removedRecords(key: key, on: connection)
            return records.isEmpty && sealed == 0 ? nil : (found, records, sealed)
        }
    }
}
