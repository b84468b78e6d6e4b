import OfferTrackDomain
import SQLite

/// A read-only view of the journal for the CLI. It sees every record committed before it opened.
public final class ReadOnlyJournal {
    package let connection: Connection
    public let path: String

    /// Why the journal cannot be read.
    public typealias OpenError = JournalOpenError

    /// Opens the journal at `path` read-only, refusing a journal of another schema version (`.requireCurrent`,
    /// every command that reads what the join derived) or only one never migrated (`.anyVersion`).
    public init(path: String, schema: SchemaPolicy = .requireCurrent) throws(OpenError) {
        precondition(schema != .migrate, "a reader never migrates")
        self.path = path
        connection = try JournalOpening.open(path: path, mode: .readOnly, schema: schema, busyTimeoutMilliseconds: 5000)
    }

    /// Opens read-only; `requiringCurrentSchema: false` accepts any migrated version.
    public convenience init(path: String, requiringCurrentSchema: Bool) throws(OpenError) {
        try self.init(path: path, schema: requiringCurrentSchema ? .requireCurrent : .anyVersion)
    }

    /// Journaled records per type.
    public func countsByType() throws -> [RecordType: Int64] {
        let statement = try connection.prepare("SELECT type, count(*) FROM records GROUP BY type")
        var counts: [RecordType: Int64] = [:]
        for type in RecordType.allCases { counts[type] = 0 }
        while try statement.step() {
            if let type = RecordColumnCodes.type(code: statement.int64(0)) { counts[type] = statement.int64(1) }
        }
        return counts
    }

    /// The users with the most records received since `since` (epoch ms), most first (ties by name), among the
    /// latest `window` records at most, so that the answer costs the same on a journal of any size; `partial` says
    /// that records received since `since` were left out.
    public func busiestUsers(
        since: Int64, top: Int = 5, window: Int64 = 200_000
    ) throws -> (users: [(user: String, records: Int64)], partial: Bool) {
        let last = try lastSeq()
        let first = max(1, last - window + 1)
        let statement = try connection.prepare(
            """
            SELECT user, count(*) FROM records WHERE seq >= ?1 AND received_at >= ?2
            GROUP BY user ORDER BY 2 DESC, 1 LIMIT ?3
            """)
        try statement.bind(first, at: 1)
        try statement.bind(since, at: 2)
        try statement.bind(Int64(top), at: 3)
        var users: [(user: String, records: Int64)] = []
        while try statement.step() { users.append((statement.text(0) ?? "", statement.int64(1))) }
        let before = try connection.prepare(
            "SELECT received_at >= ?2 FROM records WHERE seq < ?1 ORDER BY seq DESC LIMIT 1")
        try before.bind(first, at: 1)
        try before.bind(since, at: 2)
        let partial = try before.step() && before.int64(0) == 1
        return (users, partial)
    }

    /// The highest `seq` journaled (0 when empty).
    public func lastSeq() throws -> Int64 {
        try connection.scalarInt("SELECT coalesce(max(seq), 0) FROM records") ?? 0
    }

    /// The schema version.
    public func schemaVersion() throws -> Int64 {
        try connection.scalarInt("PRAGMA user_version") ?? 0
    }

    /// Whether a table exists (for features added by later migrations).
    package func hasTable(_ name: String) throws -> Bool {
        let statement = try connection.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")
        try statement.bind(name, at: 1)
        defer { statement.reset() }
        return try statement.step()
    }
}

extension ReadOnlyJournal {
    /// The user of the `subscription.outcome` record `id`, or nil when no outcome has that id (one index lookup;
    /// while an erasure's rename is pending, schema 13, the name of the key it is listed under).
    public func userOfOutcome(id: String) throws -> String? {
        let statement = try connection.prepare(
            "SELECT user, ts, seq, CASE WHEN subscribed = 1 THEN 4 ELSE 5 END FROM records WHERE id = ?1 AND type = ?2")
        try statement.bind(id, at: 1)
        try statement.bind(RecordColumnCodes.typeCode(.subscriptionOutcome), at: 2)
        defer { statement.reset() }
        guard try statement.step() else {
            // A conversion sealing kept is its index entry alone (schema 17): its key names its user.
            guard let kept = try SealedFacts.find(id: id, on: connection), case .outcome = kept.entry.record.body
            else { return nil }
            return try UserKeys.name(of: kept.key, on: connection)
        }
        guard try hasTable("pending_renames") else { return statement.text(0) }
        let renamed = try connection.prepare(
            """
            SELECT u.user FROM pending_renames p JOIN users u ON u.k = p.k
            WHERE EXISTS (SELECT 1 FROM by_user WHERE k = p.k AND kind = ?1 AND ts = ?2 AND seq = ?3)
                OR EXISTS (SELECT 1 FROM by_user_recent WHERE k = p.k AND kind = ?1 AND ts = ?2 AND seq = ?3)
            """)
        try renamed.bind(statement.int64(3), at: 1)
        try renamed.bind(statement.int64(1), at: 2)
        try renamed.bind(statement.int64(2), at: 3)
        defer { renamed.reset() }
        return try renamed.step() ? renamed.text(0) : statement.text(0)
    }
}
