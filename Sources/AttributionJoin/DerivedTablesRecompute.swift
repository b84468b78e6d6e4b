import JournalStore
import OfferTrackDomain
import SQLite

/// Which copy of the derived rows a statement writes: the live tables every reader uses, or the copy a
/// recompute for new windows fills (`recompute_presentations`, `recompute_conversions`, same columns).
package enum DerivedTableSet: Sendable {
    case live
    case recompute

    /// The live tables and their copies, by name (the schema's: `Schema.recomputeCopies`).
    static let copies = Schema.recomputeCopies

    /// `sql`, written for the live tables, prepared for this set (the live one from the static cache).
    func prepare(_ sql: StaticString, on connection: Connection) throws -> Statement {
        switch self {
        case .live:
            return try connection.prepare(static: sql)
        case .recompute:
            var text = sql.description
            for names in Self.copies { text = text.replacing(names.live, with: names.copy) }
            return try connection.prepare(text)
        }
    }

    /// Creates empty copies of the live tables, with the live tables' own definitions.
    static func createRecomputeCopies(on connection: Connection) throws {
        try Schema.dropRecomputeCopies(on: connection)
        let definition = try connection.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1")
        for names in copies {
            try definition.bind(names.live, at: 1)
            guard try definition.step(), let sql = definition.text(0) else {
                throw SQLiteError(code: 1, message: "no table \(names.live)", sql: definition.sql)
            }
            definition.reset()
            try connection.execute(sql.replacing(names.live, with: names.copy))
        }
    }

    /// Puts the copies in place of the live tables (in the caller's transaction).
    static func swapInRecomputeCopies(on connection: Connection) throws {
        for names in copies {
            try connection.execute("DROP TABLE \(names.live); ALTER TABLE \(names.copy) RENAME TO \(names.live)")
        }
    }
}

/// Recomputing the derived tables under new windows without holding the write lock for long (a `SIGHUP` with
/// new windows on a large journal): users are recomputed a chunk at a time, in the journal's user order, into a
/// copy of the tables, in transactions of their own between the writer's batches. A batch that journals records
/// of a user already in the copy refreshes the copy too (`refreshCopy`), so the copy always equals attribution
/// under the new windows over the users it has reached. The last chunk swaps the copy in, with its roll-ups and
/// the new windows in `meta`, in one transaction. Until then the live tables, and every reader, keep the old
/// windows; nothing is ever half of one and half of the other.
///
/// The caller owns the transactions: each step returns what it did, to be applied once its transaction has
/// committed (`apply`), so a rolled-back step leaves the recompute as it was.
struct DerivedTablesRecompute: Sendable {
    /// The windows being adopted.
    let settings: AttributionSettings
    /// The last user in the copy (journal byte order), nil before the first chunk.
    private(set) var lastUser: String?
    /// Users in the copy so far.
    private(set) var users = 0
    /// The copy's roll-ups, written when it is swapped in.
    private var rollup = DayRollup()

    /// What one chunk, or one batch's refresh of the copy, changed.
    struct Step: Sendable {
        var lastUser: String?
        var users = 0
        var rollup = DayRollup()
        /// The copy was swapped in: the recompute is over.
        var finished = false
    }

    /// Starts over under `settings` with empty copies (in the caller's transaction).
    static func start(settings: AttributionSettings, on connection: Connection) throws -> DerivedTablesRecompute {
        try DerivedTableSet.createRecomputeCopies(on: connection)
        return DerivedTablesRecompute(settings: settings)
    }

    /// Whether the copy holds `user` (every user up to `lastUser` in byte order).
    func holds(user: String) -> Bool {
        guard let lastUser else { return false }
        return !lastUser.utf8.lexicographicallyPrecedes(user.utf8)
    }

    /// Recomputes the users after `lastUser` into the copy until `shouldStop` says so (asked after each user),
    /// and swaps the copy in when it has reached the last user (in the caller's transaction).
    func chunk(on connection: Connection, shouldStop: () -> Bool) throws -> Step {
        var step = Step(lastUser: lastUser)
        let settings = settings
        let readAll = try RecordQueries.readUsers(after: lastUser, on: connection) { user, records in
            let attribution = Attribution.attribute(userRecords: records, settings: settings)
            try DerivedTables.insert(user: user, attribution, into: &step.rollup, tables: .recompute, on: connection)
            step.lastUser = user
            step.users += 1
            return !shouldStop()
        }
        guard readAll else { return step }
        var total = rollup
        total.add(step.rollup)
        try DerivedTableSet.swapInRecomputeCopies(on: connection)
        try connection.execute("DELETE FROM presentation_rollup; DELETE FROM conversion_days")
        try total.write(on: connection)
        try DerivedTables.store(settings, on: connection)
        step.finished = true
        return step
    }

    /// After a batch journaled `added` for `user`: refreshes the user's rows in the copy when it holds them
    /// (in the batch's transaction), adding the roll-up changes to `step`.
    func refreshCopy(
        user: String, added: [Record], mayHaveEarlier: Bool, historyLimit: Int, batchFirstSeq: Int64,
        into step: inout Step, on connection: Connection
    ) throws {
        guard holds(user: user) else { return }
        try DerivedTables.refresh(
            user: user, added: added, mayHaveEarlier: mayHaveEarlier, settings: settings,
            rollup: &step.rollup, tables: .recompute, historyLimit: historyLimit, batchFirstSeq: batchFirstSeq,
            on: connection)
    }

    /// Takes in a step whose transaction committed.
    mutating func apply(_ step: Step) {
        lastUser = step.lastUser ?? lastUser
        users += step.users
        rollup.add(step.rollup)
    }
}
