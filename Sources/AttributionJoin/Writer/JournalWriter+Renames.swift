import JournalStore
import SQLite

/// An erasure's rename of a large person, continued after its batch (SPEC 11, schema 13, `PendingRename`).
extension JournalWriter {
    /// The user keys whose erasure's rename is unfinished, each with how far it got (as last committed).
    package func pendingRenames() throws -> [Int64: PendingRename.Position] {
        let renames = try PendingRename.all(on: try connectionInUse())
        return Dictionary(renames.map { ($0.key, $0.after) }, uniquingKeysWith: { first, _ in first })
    }

    /// The user keys whose erasure's rename is unfinished (as last committed).
    public func pendingRenameKeys() throws -> Set<Int64> { Set(try pendingRenames().keys) }

    /// For the pending rename of `key`: the place in the key's index order past which at most about `rowsLeft`
    /// of its records remain to be renamed (`PendingRename.point(leaving:on:)`); nil when the rename is not
    /// pending or no more than that many remain now.
    package func renamePoint(key: Int64, leaving rowsLeft: Int) throws -> PendingRename.Position? {
        let connection = try connectionInUse()
        guard let rename = try PendingRename.all(on: connection).first(where: { $0.key == key }) else { return nil }
        return try rename.point(leaving: rowsLeft, on: connection)
    }

    /// The user key of the journaled record `id` (an erasure) when a rename of that key is pending, else nil.
    public func pendingRenameKey(ofRecord id: String) throws -> Int64? {
        let select = try connectionInUse().prepare(
            static: """
                SELECT p.k FROM records r JOIN users u ON u.user = r.user JOIN pending_renames p ON p.k = u.k
                WHERE r.id = ?1
                """)
        try select.bind(id, at: 1)
        defer { select.reset() }
        return try select.step() ? select.int64(0) : nil
    }

    /// One chunk, in one transaction: the first pending rename continued by at most `renameTuning.rowsPerChunk`
    /// records, and ended between steps once `stop()` says so. Returns whether renames remain pending.
    public func continuePendingRenames(stop: () -> Bool = { false }) throws -> Bool {
        let connection = try connectionInUse()
        // The chunk moves records from one user to another: what the writer summarized of users is stale.
        caches.summaries.forget()
        do {
            return try connection.transaction {
                let renames = try PendingRename.all(on: connection)
                guard var rename = renames.first else { return false }
                let finished = try rename.advance(
                    limit: renameTuning.rowsPerChunk, partitionsTotal: partitionsTotal, stop: stop, on: connection)
                if finished {
                    try PendingRename.remove(key: rename.key, on: connection)
                } else {
                    try rename.save(on: connection)
                }
                return !finished || renames.count > 1
            }
        } catch {
            distrustConnection(after: error)
            throw error
        }
    }

    /// Finishes every pending rename, chunk after chunk (opening a journal to migrate it: the daemon's start and
    /// `rebuild`, so that no pending rename outlives a crash once the daemon is up, and `rebuild` lists records
    /// under their users as named).
    func finishPendingRenames() throws {
        while try continuePendingRenames() {}
    }
}
