/// What each entry of the per-user index holds beside its place (schema 15): its record's attribution columns in
/// one blob (`IndexedRecordBody`), which never change once the record is journaled. A user's history is then read
/// from the index alone, their entries side by side on a page or two, instead of one `records` row (a page apart,
/// in arrival order) for each record; one blob is also cheaper for SQLite to write, move and read than a column
/// each.
package enum UserIndexColumns {
    /// The columns of every level, in order: the entry's place (`k, kind, ts, seq`), then the record's `body`.
    static let all = "k, kind, ts, seq, body"

    /// The same, from the `records` row aliased `r` listed under the key `k` of the row aliased `u`, for SQL that
    /// lists records again (migration 15).
    static let fromRecords = "u.k, \(UserIndexKind.sql), r.ts, r.seq, \(IndexedRecordBody.sql)"

    /// As `fromRecords`, the body computed by `IndexedRecordBody`'s function (`rebuild`, which defines it).
    static let fromRecordsByFunction = "u.k, \(UserIndexKind.sql), r.ts, r.seq, \(IndexedRecordBody.functionCall)"

    /// Creates a level of the index named `table` (`by_user` or `by_user_recent`).
    static func createTable(_ table: String) -> String {
        """
        CREATE TABLE \(table) (
            k INTEGER NOT NULL,
            kind INTEGER NOT NULL,
            ts INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            body BLOB NOT NULL,
            PRIMARY KEY (k, kind, ts, seq)
        ) WITHOUT ROWID;
        """
    }

    /// Where an entry's body (level aliased `b`) is not the one the `records` row aliased `r` it lists encodes to,
    /// in SQL, for `verify`.
    package static let differsFromRecord = "b.body IS NOT \(IndexedRecordBody.sql)"

    /// Migration 15: both levels rebuilt with the bodies, from `records`.
    static let migration = """
        \(createTable("by_user_15"))
        INSERT OR IGNORE INTO by_user_15 (\(all))
            SELECT \(fromRecords)
            FROM (SELECT k, seq FROM by_user UNION ALL SELECT k, seq FROM by_user_recent) b
            JOIN records r ON r.seq = b.seq JOIN users u ON u.k = b.k
            ORDER BY 1, 2, 3, 4;
        DROP TABLE by_user;
        DROP TABLE by_user_recent;
        ALTER TABLE by_user_15 RENAME TO by_user;
        \(createTable("by_user_recent"))
        """
}
