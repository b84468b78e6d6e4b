import OfferTrackDomain
import SQLite

/// One user's journaled records, found by user or by the id of any of their records (for `offertrack explain`).
public enum UserHistory {
    /// The user and all of their records, read in one snapshot; nil when the journal has no such user or
    /// record. Exactly one of `user` and `recordId` names whom to read.
    public static func read(
        _ reader: ReadOnlyJournal, user: String?, recordId: String?
    ) throws -> (user: String, records: [Record])? {
        let connection = reader.connection
        return try connection.readTransaction {
            var found = user
            if let recordId {
                let owner = try connection.prepare("SELECT user FROM records WHERE id = ?1")
                try owner.bind(recordId, at: 1)
                defer { owner.reset() }
                found = try owner.step() ? owner.text(0) : nil
            }
            guard let found else { return nil }
            let records = try RecordQueries.records(of: found, on: connection)
            return records.isEmpty ? nil : (found, records)
        }
    }
}
