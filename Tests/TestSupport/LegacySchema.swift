/// Journals as older builds left them, for the migration and refusal tests.
public enum LegacySchema {
    /// Schema version 1's tables (records only), without the `user_version` pragma.
    public static let version1Tables = """
        CREATE TABLE records (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, type INTEGER NOT NULL,
            ts INTEGER NOT NULL, user TEXT NOT NULL, received_at INTEGER NOT NULL, decision INTEGER,
            subscribed INTEGER, loaded INTEGER, offer_id TEXT, affiliate_token TEXT, campaign_token TEXT,
            message_identifier TEXT, item_id TEXT, line TEXT NOT NULL);
        CREATE INDEX records_by_user ON records(user, ts, id);
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        """
}
