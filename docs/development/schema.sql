-- The journal's schema as a freshly migrated journal has it (schema 21, `PRAGMA user_version = 21`): every table
-- and index, and no trigger. A journal is only ever made by `Schema.migrations`
-- (Sources/JournalStore/Schema/Schema.swift); this file says what they add up to, and `SchemaSQLTests` holds it to
-- them (it fails when a migration changes something and this file does not follow).
--
-- Columns are in their real order: those a later migration added come last (`ALTER TABLE ... ADD COLUMN`).
-- Times are milliseconds since the Unix epoch, UTC. A `day` that is a number is the UTC day (ts / 86,400,000,
-- floored); a `day` that is text is `YYYY-MM-DD`. How the tables are used: ARCHITECTURE.md and batch-join.md.

------------------------------------------------------------------------------------------------------------------
-- The journal
------------------------------------------------------------------------------------------------------------------

-- Every accepted record, once, in arrival order: the line verbatim (as journaled: renamed if its person was
-- forgotten) and the fields attribution reads decoded beside it. Deleted only by sealing (SPEC 12), which leaves
-- a sealed day only its reviews and erasures. `id` unique
-- is what makes a record sent again a duplicate (SPEC 3). Codes: `type` 0 capabilities, 1 offer.presented, 2 subscription outcome,
-- 3 review, 4 erasure; `decision` 0 unauthorized, 1 subscriber, 2 eligible, 3 ineligible; `subscribed`, `loaded`
-- 0 or 1; `review_decision` 1 void, 2 hold, 3 release. An erasure keeps its ticket in `review_note`. On an edge, a
-- record renamed by an erasure keeps the partition of the user it had (`kept_partition`, SPEC 10, 11).
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
    line TEXT NOT NULL,
    review_conversion TEXT,
    review_decision INTEGER,
    review_reason TEXT,
    review_note TEXT,
    kept_partition INTEGER
);

-- Reviews by the conversion they name (rule 4.7's latest review of a conversion).
CREATE INDEX records_by_review ON records(review_conversion) WHERE review_conversion IS NOT NULL;

-- Each user once, with an integer key (`k`, the rowid) given the first time one of their records is journaled.
-- An erasure renames the entry and keeps the key.
CREATE TABLE users (k INTEGER PRIMARY KEY, user TEXT NOT NULL UNIQUE);

-- The per-user index, main level: every record listed once (here, in `by_user_recent` or `by_user_sealed`) under its
-- user's key, its kind (`UserIndexKind`: 0 lapsing check, 1 other check, 2 loaded presentation, 3 unloaded
-- presentation, 4 subscribed, 5 declined, 6 review, 7 erasure), time and `seq`, with its record's attribution
-- columns in one blob (`IndexedRecordBody`). A user's history, and the bounded join's range reads of one kind,
-- touch this index alone.
CREATE TABLE by_user (
    k INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    ts INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (k, kind, ts, seq)
) WITHOUT ROWID;

-- The per-user index, recent level: the last few batches' entries of returning users. Each commit moves one
-- slice of keys' entries into `by_user` (`UserKeys.moveSlice`). Readers read both levels.
CREATE TABLE by_user_recent (
    k INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    ts INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (k, kind, ts, seq)
) WITHOUT ROWID;

-- The per-user index, sealed level (SPEC 12): the records of sealed days that sealing kept, which have no `records`
-- row, listed as in `by_user`, their bodies in the sealed form (`SealedEntryBody`; kept before schema 21, the text
-- form until a later seal of their user). Nothing is deleted here but what no rule reads any more, so its pages stay
-- full.
CREATE TABLE by_user_sealed (
    k INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    ts INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (k, kind, ts, seq)
) WITHOUT ROWID;

------------------------------------------------------------------------------------------------------------------
-- Forgetting a person (SPEC 11)
------------------------------------------------------------------------------------------------------------------

-- Each forgotten person, known only by HMAC-SHA256 of their id under the journal's key (`meta` `erasure_key`) and
-- by a 64-bit SipHash of it (`probe`, the writer's first test of each record), with the erasure that names them.
CREATE TABLE erasures (
    hash BLOB PRIMARY KEY,
    probe INTEGER NOT NULL,
    id TEXT NOT NULL,
    ts INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX erasures_by_probe ON erasures(probe);

-- An erasure's rename not finished in its batch: the records of key `k` are being renamed to `name`, those up to
-- `(kind, ts, seq)` in the key's index order are. The old name is stored nowhere. A writer that migrates (the
-- daemon's start, `offertrack rebuild`) finishes every one before anything else.
CREATE TABLE pending_renames (
    k INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    kind INTEGER NOT NULL,
    ts INTEGER NOT NULL,
    seq INTEGER NOT NULL
);

-- On a central journal, the partition of every forgotten person's name (`erased:<id>`, whose records stay in the
-- partition of the id they had, SPEC 10, 11) and of any other user whose name does not hash to the partition its
-- records came from; what `offertrack split` moves users by. Every other user's partition is their name's.
CREATE TABLE user_partitions (user TEXT PRIMARY KEY, partition INTEGER NOT NULL) WITHOUT ROWID;

------------------------------------------------------------------------------------------------------------------
-- Sealed days (SPEC 12, `JournalSealer`): how far sealing got is in `meta` (`SealState`)
------------------------------------------------------------------------------------------------------------------

-- Per sealed day, the loaded presentations counted along each grouping as `presentation_rollup` counts them
-- (`eligible` under the F the seal was given): reports read a sealed day's presentations here.
CREATE TABLE sealed_presentations (
    day INTEGER NOT NULL,
    dimension INTEGER NOT NULL,
    value TEXT NOT NULL,
    presented INTEGER NOT NULL,
    eligible INTEGER NOT NULL,
    PRIMARY KEY (day, dimension, value)
) WITHOUT ROWID;

-- Per user key, how many of their records sealing removed (`explain`'s `records` counts them).
CREATE TABLE sealed_users (k INTEGER PRIMARY KEY, records INTEGER NOT NULL);

-- A 64-bit SipHash of each sealed record's id under `meta` `seal_key`: the id sent again is `expired` before the
-- acceptance horizon and `id_conflict` after it. A record sealing keeps (`SealKeeping`) stays as its per-user index
-- entry alone, its `records` row gone: `k` and `ts` say where that entry is, so that its id still finds it
-- (`explain --id`, a review's conversion, an `offerId`); both are NULL for a record removed altogether. No index by
-- `k`: a merge of two users (SPEC 11) finds the kept records through the per-user index (`SealedFacts.move`).
CREATE TABLE sealed_ids (hash INTEGER PRIMARY KEY, k INTEGER, ts INTEGER);

------------------------------------------------------------------------------------------------------------------
-- Attribution's derived tables (SPEC 4): a cache of attribution over each user's records, under the settings in
-- `meta` (`derived_window_ms`, `derived_freshness_ms`, `derived_holding_ms`, `derived_shared_users`; absent when
-- never computed). During a reload with new windows, `recompute_presentations` and `recompute_conversions` (the
-- same definitions) hold the copy being filled; a fresh journal has none.
------------------------------------------------------------------------------------------------------------------

-- Each loaded presentation and rule 4.4's verdict on it (`eligible` 0 or 1); its offer is its record's.
CREATE TABLE derived_presentations (
    ts INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    eligible INTEGER NOT NULL,
    PRIMARY KEY (ts, seq)
) WITHOUT ROWID;

-- Each converting user's conversion (their first subscribed outcome), keyed by its outcome's time and id, its
-- user by key: `reason` NULL when attributed, else the `UnattributedReason`; the candidate presentation and its
-- offer; the lapse within the holding period (rule 4.6); the latest review naming it (rule 4.7; decision coded as
-- in `records`).
CREATE TABLE derived_conversions (
    ts INTEGER NOT NULL,
    id TEXT NOT NULL,
    k INTEGER NOT NULL,
    reason TEXT,
    offer_id TEXT,
    presented_at INTEGER,
    affiliate_token TEXT,
    campaign_token TEXT,
    message_identifier TEXT,
    item_id TEXT,
    lapse_id TEXT,
    lapse_ts INTEGER,
    review_id TEXT,
    review_ts INTEGER,
    review_decision INTEGER,
    review_reason TEXT,
    PRIMARY KEY (ts, id)
) WITHOUT ROWID;

-- Presentations rolled up per UTC day along one grouping at a time (`dimension` 0 affiliate, 1 campaign,
-- 2 message; an absent token as ''), as reports group them.
CREATE TABLE presentation_rollup (
    day INTEGER NOT NULL,
    dimension INTEGER NOT NULL,
    value TEXT NOT NULL,
    presented INTEGER NOT NULL,
    eligible INTEGER NOT NULL,
    PRIMARY KEY (day, dimension, value)
) WITHOUT ROWID;

-- Conversions rolled up per UTC day and whole combination of tokens (absent as ''; all '' when unattributed),
-- by whether attributed, lapsed (rule 4.6) and the review's decision (rule 4.7: 0 none, else as in `records`).
CREATE TABLE conversion_days (
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

------------------------------------------------------------------------------------------------------------------
-- The commission export (SPEC 7) and payout statements (SPEC 7.1): immutable once published
------------------------------------------------------------------------------------------------------------------

-- Each published export day: its manifest, and its CSV either here (days published before schema 9) or empty with
-- the `run` whose parts hold it.
CREATE TABLE published_days (
    day TEXT PRIMARY KEY,
    generated_at INTEGER NOT NULL,
    csv BLOB NOT NULL,
    manifest BLOB NOT NULL,
    run INTEGER
) WITHOUT ROWID;

-- The rows in force of days published before schema 9, by original day and conversion. No longer written.
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

-- A publication being staged or published, in chunks of their own transactions (`ExportStaging`); its id is never
-- reused (AUTOINCREMENT, which adds SQLite's `sqlite_sequence`). `lines`: how many `export_lines` it stores, NULL
-- for runs staged before schema 14.
CREATE TABLE export_runs (
    run INTEGER PRIMARY KEY AUTOINCREMENT,
    day TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    lines INTEGER
);

-- A run's CSV, in parts of about 1 MiB.
CREATE TABLE export_parts (
    run INTEGER NOT NULL,
    part INTEGER NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (run, part)
);

-- A run's lines as the plan made them, numbered in the file's order (`kind` 'commission' or 'adjustment'; a
-- reversal carries the row in force, its amount stored not negated), for the fleet's export (SPEC 10).
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

-- A run's changes to the rows in force: the day's rows, each adjusted row of an earlier day, `removed` 1 for a row
-- withdrawn. The row in force for a day and conversion is the latest published run's, else `export_ledger`'s.
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

-- Each published payout month's exact files (`month` is `YYYY-MM`).
CREATE TABLE published_months (
    month TEXT PRIMARY KEY,
    generated_at INTEGER NOT NULL,
    csv BLOB NOT NULL,
    manifest BLOB NOT NULL
) WITHOUT ROWID;

------------------------------------------------------------------------------------------------------------------
-- Everything else
------------------------------------------------------------------------------------------------------------------

-- The writer's summaries of returning users (`UserSummary`: the latest check with its id and decision, the times of
-- the latest loaded presentation and of the first `subscribed` outcome), saved by a writer that closes and taken by
-- the next one, with `meta` `saved_summaries_seq` the `seq` the journal ended at (`SavedSummaries`). A hint: trusted
-- only while the journal ends there and no other connection opened it to write since; empty otherwise.
CREATE TABLE saved_summaries (
    k INTEGER PRIMARY KEY,
    check_ts INTEGER,
    check_id TEXT,
    check_decision TEXT,
    loaded_ts INTEGER,
    subscribed_ts INTEGER
);

-- Values by key, read and written by typed keys (`JournalMeta`, `MetaKey`): the derived tables' settings (above),
-- `erasure_key`; sealing's `sealed_through_day`, `sealed_window_ms`, `sealed_freshness_ms`, `acceptance_horizon_ms`,
-- `sealed_cleaned_through_day`, `seal_key`; the saved summaries' `saved_summaries_seq`; an edge's `forward_acked_seq`, `forward_journal_id`, `forward_stream_created`; the fleet's
-- `fleet_stream`, `fleet_partitions_total`, `fleet_partitions`, `fleet_consume_lag`, `fleet_stream_report`.
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
