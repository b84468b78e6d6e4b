import SQLite

/// What each entry of the per-user index holds beside its place (schema 15): a copy of its record's attribution
/// columns (`RecordQueries.columns`), which never change once the record is journaled. A user's history is then
/// read from the index alone, their entries side by side on a page or two, instead of one `records` row (a page
/// apart, in arrival order) for each record.
enum UserIndexColumns {
    /// The columns of both levels, in order: the entry's place (`k, kind, ts, seq`), then the copied columns but
    /// `ts`.
    static let all =
        "k, kind, ts, seq, id, type, decision, subscribed, loaded, offer_id, affiliate_token, campaign_token, "
        + "message_identifier, item_id, review_conversion, review_decision, review_reason, review_note"

    /// The same, each from the `records` row aliased `r` listed under the key `k` of the row aliased `u`, for SQL
    /// that lists records again (migration 15, `rebuild`).
    static let fromRecords =
        "u.k, \(UserIndexKind.sql), r.ts, r.seq, r.id, r.type, r.decision, r.subscribed, r.loaded, r.offer_id, "
        + "r.affiliate_token, r.campaign_token, r.message_identifier, r.item_id, r.review_conversion, "
        + "r.review_decision, r.review_reason, r.review_note"

    /// Creates a level of the index named `table` (`by_user` or `by_user_recent`).
    static func createTable(_ table: String) -> String {
        """
        CREATE TABLE \(table) (
            k INTEGER NOT NULL,
            kind INTEGER NOT NULL,
            ts INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            id TEXT NOT NULL,
            type INTEGER NOT NULL,
            decision INTEGER,
            subscribed INTEGER,
            loaded INTEGER,
            offer_id TEXT,
            affiliate_token TEXT,
            campaign_token TEXT,
            message_identifier TEXT,
            item_id TEXT,
            review_conversion TEXT,
            review_decision INTEGER,
            review_reason TEXT,
            review_note TEXT,
            PRIMARY KEY (k, kind, ts, seq)
        ) WITHOUT ROWID;
        """
    }

    /// Where an entry's copy differs from the `records` row aliased `r` it lists (level aliased `b`), in SQL, for
    /// `verify`.
    static let differsFromRecord = RecordQueries.columns.split(separator: ", ").map { "b.\($0) IS NOT r.\($0)" }
        .joined(separator: " OR ")

    /// Migration 15: both levels rebuilt with the copies, from `records`.
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
