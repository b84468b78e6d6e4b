import SQLite

/// The journal's schema: numbered forward migrations, tracked in `PRAGMA user_version`.
public enum Schema {
    /// One step from the version before to `version`, run in its own transaction (so a crash leaves the journal at
    /// one version or the next, never between).
    enum Migration {
        /// SQL, after which `PRAGMA user_version` is set to the version.
        case sql(String)
        /// Schema 8's per-user index on integer keys (`UserKeysMigration`), which sets the version itself.
        case userKeys
    }

    /// Every migration, numbered by the version it migrates to, in order: opening a journal of version v applies
    /// those numbered above v (`migrate`).
    static let migrations: [(version: Int64, migration: Migration)] = [
        // 1: the journal of records, kept verbatim, with the fields attribution reads decoded beside them.
        (
            1,
            .sql(
                """
                CREATE TABLE records (
                    seq INTEGER PRIMARY KEY,
                    id TEXT NOT NULL UNIQUE,
                    type INTEGER NOT NULL,
                    ts INTEGER NOT NULL,
                    user TEXT NOT NULL,
                    received_at INTEGER NOT NULL,
                    decision INTEGER,
                    subscribed INTEGER,
                    loaded INTEGER,
                    offer_id TEXT,
                    affiliate_token TEXT,
                    campaign_token TEXT,
                    message_identifier TEXT,
                    item_id TEXT,
                    line TEXT NOT NULL
                );
                CREATE INDEX records_by_user ON records(user, ts, id);
                CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
                """)
        ),
        // 2: attribution's derived tables (SPEC section 4), maintained per user as records arrive, keyed by time
        // so that in-order traffic appends and reports read time ranges. Message
        // identifiers are stored with the `join` default applied. The windows they were computed with are in
        // `meta` (`derived_window_ms`, `derived_freshness_ms`); absent means never computed. The `*_days` tables
        // are daily roll-ups of the two (absent tokens as '', which no valid token is; unattributed conversions
        // with no tokens) so that a report reads one row per day and group instead of one per record.
        (
            2,
            .sql(
                """
                CREATE TABLE derived_presentations (
                    ts INTEGER NOT NULL,
                    id TEXT NOT NULL,
                    user TEXT NOT NULL,
                    affiliate_token TEXT,
                    campaign_token TEXT,
                    message_identifier TEXT NOT NULL,
                    item_id TEXT,
                    eligible INTEGER NOT NULL,
                    PRIMARY KEY (ts, id)
                ) WITHOUT ROWID;
                CREATE TABLE derived_conversions (
                    ts INTEGER NOT NULL,
                    id TEXT NOT NULL,
                    user TEXT NOT NULL,
                    reason TEXT,
                    offer_id TEXT,
                    presented_at INTEGER,
                    affiliate_token TEXT,
                    campaign_token TEXT,
                    message_identifier TEXT,
                    item_id TEXT,
                    PRIMARY KEY (ts, id)
                ) WITHOUT ROWID;
                CREATE TABLE presentation_days (
                    day INTEGER NOT NULL,
                    affiliate_token TEXT NOT NULL,
                    campaign_token TEXT NOT NULL,
                    message_identifier TEXT NOT NULL,
                    presented INTEGER NOT NULL,
                    eligible INTEGER NOT NULL,
                    PRIMARY KEY (day, affiliate_token, campaign_token, message_identifier)
                ) WITHOUT ROWID;
                CREATE TABLE conversion_days (
                    day INTEGER NOT NULL,
                    attributed INTEGER NOT NULL,
                    affiliate_token TEXT NOT NULL,
                    campaign_token TEXT NOT NULL,
                    message_identifier TEXT NOT NULL,
                    conversions INTEGER NOT NULL,
                    PRIMARY KEY (day, attributed, affiliate_token, campaign_token, message_identifier)
                ) WITHOUT ROWID;
                """)
        ),
        // 3: the commission export (SPEC section 7): every published day's exact files, and for each published
        // day and conversion the row in force (the last row that added it), from which adjustments are computed.
        (
            3,
            .sql(
                """
                CREATE TABLE published_days (
                    day TEXT PRIMARY KEY,
                    generated_at INTEGER NOT NULL,
                    csv BLOB NOT NULL,
                    manifest BLOB NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE export_ledger (
                    original_date TEXT NOT NULL,
                    conversion_id TEXT NOT NULL,
                    converted_at INTEGER NOT NULL,
                    offer_id TEXT NOT NULL,
                    presented_at INTEGER NOT NULL,
                    affiliate_token TEXT NOT NULL,
                    campaign_token TEXT,
                    message_identifier TEXT NOT NULL,
                    item_id TEXT,
                    amount_minor INTEGER NOT NULL,
                    currency TEXT NOT NULL,
                    PRIMARY KEY (original_date, conversion_id)
                ) WITHOUT ROWID;
                """)
        ),
        // 4: the join writes less per presentation. A derived presentation keeps only what the join decides, its
        // eligibility, keyed by time and its record's `seq`; its offer is the record's own (joined by `seq`). Presentations are rolled up per day along one
        // grouping at a time (dimension 0 affiliate, 1 campaign, 2 message; absent tokens as ''), which is how
        // reports group them, instead of per combination of all three: a batch touches a few groups per
        // dimension instead of about one per presentation. Both are filled from version 3's tables.
        (
            4,
            .sql(
                """
                CREATE TABLE derived_presentations_4 (
                    ts INTEGER NOT NULL,
                    seq INTEGER NOT NULL,
                    eligible INTEGER NOT NULL,
                    PRIMARY KEY (ts, seq)
                ) WITHOUT ROWID;
                INSERT INTO derived_presentations_4
                    SELECT d.ts, r.seq, d.eligible FROM derived_presentations d JOIN records r ON r.id = d.id;
                DROP TABLE derived_presentations;
                ALTER TABLE derived_presentations_4 RENAME TO derived_presentations;
                CREATE TABLE presentation_rollup (
                    day INTEGER NOT NULL,
                    dimension INTEGER NOT NULL,
                    value TEXT NOT NULL,
                    presented INTEGER NOT NULL,
                    eligible INTEGER NOT NULL,
                    PRIMARY KEY (day, dimension, value)
                ) WITHOUT ROWID;
                INSERT INTO presentation_rollup
                    SELECT day, 0, affiliate_token, sum(presented), sum(eligible) FROM presentation_days GROUP BY 1, 3
                    UNION ALL
                    SELECT day, 1, campaign_token, sum(presented), sum(eligible) FROM presentation_days GROUP BY 1, 3
                    UNION ALL
                    SELECT day, 2, message_identifier, sum(presented), sum(eligible) FROM presentation_days GROUP BY 1, 3;
                DROP TABLE presentation_days;
                """)
        ),
        // 5: rule 4.6, the holding period. A derived conversion names its lapse (the first lapse record within the
        // holding period, attributed conversions only), and conversions roll up per day separately for lapsed
        // ones. The holding period the tables were computed with is `derived_holding_ms` in `meta`; journals of
        // version 4 were computed without one, which is H = 0, under which nothing lapses.
        (
            5,
            .sql(
                """
                ALTER TABLE derived_conversions ADD COLUMN lapse_id TEXT;
                ALTER TABLE derived_conversions ADD COLUMN lapse_ts INTEGER;
                CREATE TABLE conversion_days_5 (
                    day INTEGER NOT NULL,
                    attributed INTEGER NOT NULL,
                    lapsed INTEGER NOT NULL,
                    affiliate_token TEXT NOT NULL,
                    campaign_token TEXT NOT NULL,
                    message_identifier TEXT NOT NULL,
                    conversions INTEGER NOT NULL,
                    PRIMARY KEY (day, attributed, lapsed, affiliate_token, campaign_token, message_identifier)
                ) WITHOUT ROWID;
                INSERT INTO conversion_days_5
                    SELECT day, attributed, 0, affiliate_token, campaign_token, message_identifier, conversions
                    FROM conversion_days;
                DROP TABLE conversion_days;
                ALTER TABLE conversion_days_5 RENAME TO conversion_days;
                INSERT INTO meta (key, value) SELECT 'derived_holding_ms', '0' FROM meta WHERE key = 'derived_window_ms';
                """)
        ),
        // 6: operators' reviews (SPEC 3.4, rule 4.7). A `review` record (type 3) keeps what it decides in columns of
        // its own; a derived conversion names its review (the latest naming it), and conversions roll up per day
        // separately by the review's decision (0 none, 1 void, 2 hold, 3 release; 0 for conversions that are not
        // attributed or lapsed, which reviews do not affect). Journals of version 5 have no reviews.
        (
            6,
            .sql(
                """
                ALTER TABLE records ADD COLUMN review_conversion TEXT;
                ALTER TABLE records ADD COLUMN review_decision INTEGER;
                ALTER TABLE records ADD COLUMN review_reason TEXT;
                ALTER TABLE records ADD COLUMN review_note TEXT;
                ALTER TABLE derived_conversions ADD COLUMN review_id TEXT;
                ALTER TABLE derived_conversions ADD COLUMN review_ts INTEGER;
                ALTER TABLE derived_conversions ADD COLUMN review_decision INTEGER;
                ALTER TABLE derived_conversions ADD COLUMN review_reason TEXT;
                CREATE TABLE conversion_days_6 (
                    day INTEGER NOT NULL,
                    attributed INTEGER NOT NULL,
                    lapsed INTEGER NOT NULL,
                    review INTEGER NOT NULL,
                    affiliate_token TEXT NOT NULL,
                    campaign_token TEXT NOT NULL,
                    message_identifier TEXT NOT NULL,
                    conversions INTEGER NOT NULL,
                    PRIMARY KEY (day, attributed, lapsed, review, affiliate_token, campaign_token, message_identifier)
                ) WITHOUT ROWID;
                INSERT INTO conversion_days_6
                    SELECT day, attributed, lapsed, 0, affiliate_token, campaign_token, message_identifier, conversions
                    FROM conversion_days;
                DROP TABLE conversion_days;
                ALTER TABLE conversion_days_6 RENAME TO conversion_days;
                """)
        ),
        // 7: payout statements (SPEC 7.1): every published month's exact files, as first published.
        (
            7,
            .sql(
                """
                CREATE TABLE published_months (
                    month TEXT PRIMARY KEY,
                    generated_at INTEGER NOT NULL,
                    csv BLOB NOT NULL,
                    manifest BLOB NOT NULL
                ) WITHOUT ROWID;
                """)
        ),
        // 8: per-user access on integer keys (`UserKeysMigration`).
        (8, .userKeys),
        // 9: export days published in short transactions (SPEC 7), so that ingest never waits for a whole day's
        // publication. A publication is staged as a run (`export_runs`): the day's CSV in parts of about a MiB
        // (`export_parts`) and the ledger's changes (`ledger_entries`: the day's rows, each adjusted earlier row,
        // and `removed` for a row no longer in force), each chunk in its own transaction. A last small transaction
        // names the run in `published_days`; until then nothing reads it. The row in force for a published day and
        // conversion is the one of the latest published run that names it, else `export_ledger`'s (which keeps
        // the rows of days published before version 9, and no longer changes). Days published before version 9
        // keep their CSV in `published_days.csv`; later ones have an empty `csv` and a `run`.
        (
            9,
            .sql(
                """
                ALTER TABLE published_days ADD COLUMN run INTEGER;
                CREATE TABLE export_runs (
                    run INTEGER PRIMARY KEY AUTOINCREMENT,
                    day TEXT NOT NULL,
                    started_at INTEGER NOT NULL
                );
                CREATE TABLE export_parts (
                    run INTEGER NOT NULL,
                    part INTEGER NOT NULL,
                    bytes BLOB NOT NULL,
                    PRIMARY KEY (run, part)
                );
                CREATE TABLE ledger_entries (
                    run INTEGER NOT NULL,
                    original_date TEXT NOT NULL,
                    conversion_id TEXT NOT NULL,
                    removed INTEGER NOT NULL,
                    converted_at INTEGER,
                    offer_id TEXT,
                    presented_at INTEGER,
                    affiliate_token TEXT,
                    campaign_token TEXT,
                    message_identifier TEXT,
                    item_id TEXT,
                    amount_minor INTEGER,
                    currency TEXT,
                    PRIMARY KEY (run, original_date, conversion_id)
                ) WITHOUT ROWID;
                """)
        ),
        // 10: the per-user index in two levels (`UserKeys`). A batch lists its records in `by_user_recent`, which
        // stays a few batches small, so a commit dirties few of its pages; each commit then moves the entries of
        // one slice of the users' keys into `by_user`, many to a page at once. Readers read both.
        (
            10,
            .sql(
                """
                CREATE TABLE by_user_recent (
                    k INTEGER NOT NULL,
                    ts INTEGER NOT NULL,
                    seq INTEGER NOT NULL,
                    PRIMARY KEY (k, ts, seq)
                ) WITHOUT ROWID;
                """)
        ),
        // 11: attribution work bounded per record (SPEC 4 for a user with a long history). Both levels of the
        // per-user index list each record's kind (`UserIndexKind`) before its time, so that what rules 4.1–4.7
        // look at (the first subscribed outcome, the latest check or loaded presentation before a time, the first
        // lapse after one) is a range read of one kind; reviews are found by the conversion they name.
        (
            11,
            .sql(
                """
                CREATE TABLE by_user_11 (
                    k INTEGER NOT NULL,
                    kind INTEGER NOT NULL,
                    ts INTEGER NOT NULL,
                    seq INTEGER NOT NULL,
                    PRIMARY KEY (k, kind, ts, seq)
                ) WITHOUT ROWID;
                INSERT INTO by_user_11
                    SELECT b.k, \(UserIndexKind.sql), b.ts, b.seq
                    FROM (SELECT k, ts, seq FROM by_user UNION ALL SELECT k, ts, seq FROM by_user_recent) b
                    JOIN records r ON r.seq = b.seq
                    ORDER BY 1, 2, 3, 4;
                DROP TABLE by_user;
                DROP TABLE by_user_recent;
                ALTER TABLE by_user_11 RENAME TO by_user;
                CREATE TABLE by_user_recent (
                    k INTEGER NOT NULL,
                    kind INTEGER NOT NULL,
                    ts INTEGER NOT NULL,
                    seq INTEGER NOT NULL,
                    PRIMARY KEY (k, kind, ts, seq)
                ) WITHOUT ROWID;
                CREATE INDEX records_by_review ON records(review_conversion) WHERE review_conversion IS NOT NULL;
                """)
        ),
        // 12: forgetting a person (SPEC 3.5, 11). An `erasure` record (type 4, kind 7) keeps its ticket in
        // `review_note`. `erasures` knows each forgotten person only by HMAC-SHA256 of their id under the
        // journal's random key (`meta` `erasure_key`, made with the first erasure) and by a 64-bit SipHash of it
        // under the same key (the writer's cheap first test of each record), with the erasure that names them. An
        // edge's renamed record keeps the partition of the user it had (`kept_partition`), to be forwarded on it.
        (12, .sql(ErasedUsers.migration)),
        // 13: an erasure's rename of a large person's records, continued in chunks after its batch (`PendingRenames`):
        // key `k` is being renamed to `name`; `(kind, ts, seq)` is how far in `k`'s per-user index it got.
        (13, .sql(PendingRename.migration)),
        // 14: a published day's export lines stored as rows (`ExportLines`: each line's kind, the row's columns with
        // its amount not negated, whether it reverses the row in force, its original date), beside its CSV, so that
        // the fleet's export merges the central journals' rows (SPEC 10) without reading their CSV back. Staged
        // in chunks with the run; `export_runs.lines` is how many the run stores, NULL for runs staged before
        // version 14 (their days, and days published before version 9, have their CSV only).
        (
            14,
            .sql(
                """
                CREATE TABLE export_lines (
                    run INTEGER NOT NULL,
                    line INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    reversal INTEGER NOT NULL,
                    original_date TEXT,
                    conversion_id TEXT NOT NULL,
                    converted_at INTEGER NOT NULL,
                    offer_id TEXT NOT NULL,
                    presented_at INTEGER NOT NULL,
                    affiliate_token TEXT NOT NULL,
                    campaign_token TEXT,
                    message_identifier TEXT NOT NULL,
                    item_id TEXT,
                    amount_minor INTEGER NOT NULL,
                    currency TEXT NOT NULL,
                    PRIMARY KEY (run, line)
                ) WITHOUT ROWID;
                ALTER TABLE export_runs ADD COLUMN lines INTEGER;
                """)
        ),
        // 15: both levels of the per-user index hold their records' attribution columns in one blob
        // (`UserIndexColumns`, `IndexedRecordBody`), so that a returning user's history is read from the index alone.
        (15, .sql(UserIndexColumns.migration)),
        // 16: sealed days (SPEC 12): the tables `SealState.migration` creates; how far sealing got is in `meta`.
        (16, .sql(SealState.migration)),
        // 17: a sealed day's kept records are their per-user index entries alone (`SealState.keptFactsMigration`).
        (17, .sql(SealState.keptFactsMigration)),
        // 18: a central journal's users whose partition is not their name's (`UserPartitions`).
        (18, .sql(UserPartitions.migration)),
        // 19: no index of the kept sealed records by user key (`SealState.noKeptFactsIndexMigration`).
        (19, .sql(SealState.noKeptFactsIndexMigration)),
        // 20: the writer's summaries of returning users, saved when it closes for the next one (`SavedSummaries`).
        (20, .sql(SavedSummaries.migration)),
        // 21: a level of the per-user index for the entries sealing kept (`UserIndexLevel.migration`).
        (21, .sql(UserIndexLevel.migration)),
    ]
}
