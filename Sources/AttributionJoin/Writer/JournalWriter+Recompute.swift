import JournalStore
import OfferTrackDomain
import SQLite

/// Recomputing the derived tables for new windows a chunk at a time, and `offertrack rebuild`.
extension JournalWriter {
    /// Starts recomputing the derived tables under `settings` a chunk at a time (`continueRecompute`), the live
    /// tables keeping their windows until the last chunk. Returns false, with nothing to do, when the tables
    /// already follow `settings` (a recompute in progress is then abandoned). Starts over if one is in progress.
    public func beginRecompute(_ settings: AttributionSettings) throws -> Bool {
        recompute = nil
        let connection = try connectionInUse()
        let started = try connection.transaction { () -> DerivedTablesRecompute? in
            guard try DerivedTables.settings(on: connection) != settings else {
                try Schema.dropRecomputeCopies(on: connection)
                return nil
            }
            return try DerivedTablesRecompute.start(settings: settings, on: connection)
        }
        recompute = started
        return started != nil
    }

    /// Recomputes the next users, in one transaction, until `shouldStop` (asked after each user) says so; the
    /// last chunk puts the new tables in place. Returns whether the recompute is over (true with none running).
    /// After a failure the recompute is abandoned (the next start recomputes from scratch).
    public func continueRecompute(shouldStop: () -> Bool) throws -> Bool {
        guard let running = recompute else { return true }
        do {
            let connection = try connectionInUse()
            let step = try connection.transaction { try running.chunk(on: connection, shouldStop: shouldStop) }
            recompute?.apply(step)
            if step.finished { recompute = nil }
            return step.finished
        } catch {
            recompute = nil
            distrustConnection(after: error)
            throw error
        }
    }

    /// Drops a recompute in progress (a stopping daemon); the next start recomputes from scratch.
    public func abandonRecompute() {
        recompute = nil
    }

    /// Users recomputed so far by the recompute in progress; nil when none runs.
    public var recomputedUsers: Int? { recompute?.users }

    /// `offertrack rebuild`: lists every record under its user's key again (`by_user`), then recomputes every
    /// derived table from the journal under `settings`, in one transaction.
    public func rebuildDerivedTables(settings: AttributionSettings) throws {
        let connection = try connectionInUse()
        // Users may lose or get keys: nothing this writer remembers by name or key holds.
        caches.forgetNames()
        try connection.transaction {
            try UserKeys.rebuild(on: connection)
            try DerivedTables.rebuild(settings: settings, on: connection)
        }
    }
}
