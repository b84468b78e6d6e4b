import OfferTrackDomain
import SQLite

/// The writer's summaries of returning users (`UserSummary`), saved when a writer closes and taken by the next one
/// that opens the journal, so that a restarted daemon joins a returning user's first records without reading their
/// history again (as a database saves the list of its cached pages at shutdown and loads it at start).
///
/// Saved with the journal's last `seq` in `meta`; the next writer trusts them only when the journal still ends there
/// and no other connection opened it to write since (`JournalOpening.open` forgets them for every writer but the
/// checkpointer, which changes no content). Taking them forgets them too, so a crash never leaves summaries behind
/// that a later writer could trust. They are hints: without them the join reads histories as before.
package enum SavedSummaries {
    /// The journal's last `seq` when the summaries were saved; absent: none to trust.
    package static let lastSeqKey = MetaKey<Int64>("saved_summaries_seq")

    /// Schema 20: one row a summarized user, by key; the check's decision as its SPEC name.
    static let migration = """
        CREATE TABLE saved_summaries (
            k INTEGER PRIMARY KEY,
            check_ts INTEGER,
            check_id TEXT,
            check_decision TEXT,
            loaded_ts INTEGER,
            subscribed_ts INTEGER
        );
        """

    /// The first schema version that has them.
    static let sinceVersion: Int64 = 20

    /// Forgets the saved summaries: a connection that may change the journal opened it. Writes only when there is
    /// something to forget, so that opening beside a running daemon never waits for its write lock.
    static func forget(on connection: Connection) throws {
        guard (try connection.scalarInt("PRAGMA user_version") ?? 0) >= sinceVersion,
            try JournalMeta(connection).contains(lastSeqKey)
        else { return }
        try connection.transaction { try clear(on: connection) }
    }

    /// Replaces the saved summaries with `summaries`, made by a writer that appended every record up to
    /// `lastSeq`; saves nothing when the journal no longer ends there or an erasure's rename is pending (it will
    /// move records between users).
    package static func save(
        _ summaries: [(key: Int64, summary: UserSummary)], lastSeq: Int64, on connection: Connection
    )
        throws
    {
        try connection.transaction {
            try clear(on: connection)
            guard try RecordQueries.lastSeq(on: connection) == lastSeq,
                try connection.scalarInt("SELECT count(*) FROM (SELECT 1 FROM pending_renames LIMIT 1)") == 0
            else { return }
            let insert = try connection.prepare(
                """
                INSERT INTO saved_summaries (k, check_ts, check_id, check_decision, loaded_ts, subscribed_ts)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                """)
            for (key, summary) in summaries {
                try insert.bind(key, at: 1)
                try insert.bind(summary.latestCheck?.ts, at: 2)
                try insert.bind(summary.latestCheck?.id, at: 3)
                try insert.bind(summary.latestCheck?.decision.rawValue, at: 4)
                try insert.bind(summary.latestLoadedPresentationTs, at: 5)
                try insert.bind(summary.firstSubscribedTs, at: 6)
                try insert.run()
            }
            try JournalMeta(connection).set(lastSeqKey, to: lastSeq)
        }
    }

    /// The saved summaries when the journal still ends where they were saved (with that `seq`), else nil; either
    /// way they are forgotten.
    package static func take(on connection: Connection) throws -> (lastSeq: Int64, summaries: [(Int64, UserSummary)])? {
        // Most openings find none: no write lock for them.
        guard try JournalMeta(connection).contains(lastSeqKey) else { return nil }
        return try connection.transaction {
            guard let savedAt = try JournalMeta(connection).value(lastSeqKey) else { return nil }
            let summaries = try RecordQueries.lastSeq(on: connection) == savedAt ? try read(on: connection) : nil
            try clear(on: connection)
            return summaries.map { (savedAt, $0) }
        }
    }

    /// Every saved row; nil when one cannot be read back as it was saved (none is trusted then).
    private static func read(on connection: Connection) throws -> [(Int64, UserSummary)]? {
        let select = try connection.prepare(
            "SELECT k, check_ts, check_id, check_decision, loaded_ts, subscribed_ts FROM saved_summaries")
        defer { select.reset() }
        var summaries: [(Int64, UserSummary)] = []
        while try select.step() {
            var summary = UserSummary()
            if !select.isNull(1) {
                guard let id = select.text(2),
                    let decision = select.text(3).flatMap(EligibilityDecision.init(rawValue:))
                else { return nil }
                summary.latestCheck = UserSummary.Check(ts: select.int64(1), id: id, decision: decision)
            }
            summary.latestLoadedPresentationTs = select.isNull(4) ? nil : select.int64(4)
            summary.firstSubscribedTs = select.isNull(5) ? nil : select.int64(5)
            summaries.append((select.int64(0), summary))
        }
        return summaries
    }

    private static func clear(on connection: Connection) throws {
        try JournalMeta(connection).remove(lastSeqKey)
        try connection.execute("DELETE FROM saved_summaries")
    }
}
