import JournalStore
import OfferTrackDomain
import SQLite

/// Taking some users out of a journal whole (`offertrack split`, SPEC 10: another central journal holds them now):
/// their records, their index entries (what sealing kept of them too), their key and what sealing counted of them,
/// and then attribution's derived tables and roll-ups rebuilt from what remains, as `offertrack rebuild` does.
/// Forgotten people are only forgotten: `erasures` stays whole, so that a later record of one is renamed wherever it
/// arrives. No `seq` is given twice: the highest given so far is kept in `meta` (`RecordQueries.seqFloorKey`).
package enum UserRemoval {
    /// How many users stayed and how many were taken out.
    package struct Counts: Sendable, Equatable {
        package var kept = 0
        package var removed = 0
    }

    /// Removes, in the caller's transaction, every user for whom `leaves` is true. With `dropSealedCounts`, the
    /// sealed days' presentation counts go too (they count every user's presentations and cannot be divided: one
    /// journal of a split keeps them).
    package static func remove(
        where leaves: (String) throws -> Bool, dropSealedCounts: Bool, on connection: Connection
    ) throws -> Counts {
        var counts = Counts()
        // The records taken out may hold the highest `seq`: it is never given again (`RecordQueries.lastSeq`).
        try JournalMeta(connection).set(RecordQueries.seqFloorKey, to: try RecordQueries.lastSeq(on: connection))
        try connection.execute(
            """
            DROP TABLE IF EXISTS temp.leaving_keys; DROP TABLE IF EXISTS temp.leaving_users;
            CREATE TEMP TABLE leaving_keys (k INTEGER PRIMARY KEY);
            CREATE TEMP TABLE leaving_users (user TEXT PRIMARY KEY) WITHOUT ROWID;
            """)
        let users = try connection.prepare("SELECT k, user FROM users")
        let key = try connection.prepare("INSERT INTO leaving_keys (k) VALUES (?1)")
        let name = try connection.prepare("INSERT OR IGNORE INTO leaving_users (user) VALUES (?1)")
        var leaving: [(Int64, String)] = []
        while try users.step() {
            let user = users.text(1) ?? ""
            if try leaves(user) {
                leaving.append((users.int64(0), user))
            } else {
                counts.kept += 1
            }
        }
        users.reset()
        counts.removed = leaving.count
        for (k, user) in leaving {
            try key.bind(k, at: 1)
            try key.run()
            try name.bind(user, at: 1)
            try name.run()
        }
        // Records are found by user name: `records` has no index on it, so this is one scan of the table.
        try connection.execute(
            """
            DELETE FROM records WHERE user IN leaving_users;
            DELETE FROM by_user WHERE k IN leaving_keys;
            DELETE FROM by_user_recent WHERE k IN leaving_keys;
            DELETE FROM by_user_sealed WHERE k IN leaving_keys;
            DELETE FROM sealed_users WHERE k IN leaving_keys;
            DELETE FROM sealed_ids WHERE k IN leaving_keys;
            DELETE FROM user_partitions WHERE user IN leaving_users;
            DELETE FROM pending_renames WHERE k IN leaving_keys;
            DELETE FROM users WHERE k IN leaving_keys;
            \(dropSealedCounts ? "DELETE FROM sealed_presentations;" : "")
            DROP TABLE leaving_keys; DROP TABLE leaving_users;
            """)
        try UserKeys.rebuild(on: connection)
        if let settings = try DerivedTables.settings(on: connection) {
            try DerivedTables.rebuild(settings: settings, on: connection)
        }
        return counts
    }

    /// The ids of every conversion the derived tables hold.
    package static func conversionIDs(on connection: Connection) throws -> Set<ExactString> {
        let select = try connection.prepare("SELECT id FROM derived_conversions")
        defer { select.reset() }
        var ids: Set<ExactString> = []
        while try select.step() { ids.insert(ExactString(select.text(0) ?? "")) }
        return ids
    }
}
