import SQLite

/// What the journal's writer knows of which users have records, so that a user it knows to be new skips the
/// index probe of the join (`DerivedTables.refresh`).
///
/// It is exact only in one direction: once complete, a user not in the filter has nothing journaled. It becomes
/// complete by scanning the journal's users a chunk at a time (`learn`), or at once when the journal is empty,
/// and stays complete while this writer is the only one appending: every batch starts by comparing the
/// journal's last `seq` with the one this writer left, and starts over when another connection appended.
public final class KnownUsers {
    private var filter = UserFilter(expectedUsers: 0)
    /// The journal's `max(seq)` when this writer last committed or learned; nil when unknown.
    private var expectedLastSeq: Int64?
    /// The greatest user scanned so far; nil before the first chunk.
    private var scannedThrough: String?
    /// Whether every user with a record up to `expectedLastSeq` is in the filter.
    package private(set) var isComplete = false
    /// How many users `learn` has read from the journal since the last start-over.
    package private(set) var learnedUsers = 0

    /// Users per chunk of `learn` that keep a batch waiting about a millisecond.
    public static let defaultChunk = 4096

    package init() {}

    /// Starts over unless the journal ends at the `seq` this writer left it at. Call at the start of every
    /// transaction that uses or teaches the filter, with `max(seq)` read in that transaction.
    package func synchronize(journalLastSeq: Int64) {
        guard journalLastSeq != expectedLastSeq else { return }
        // Users average a few records each; layers grow if there are more.
        filter = UserFilter(expectedUsers: Int(journalLastSeq / 4))
        scannedThrough = nil
        learnedUsers = 0
        isComplete = journalLastSeq == 0
        expectedLastSeq = journalLastSeq
    }

    /// Notes that the current batch appends records of `user`, and returns true when `user` certainly had none
    /// journaled before it. (A user whose batch then rolls back stays noted: harmless, like a false positive.)
    package func noteAppend(of user: String) -> Bool {
        filter.insert(user) && isComplete
    }

    /// Whether `user` certainly has nothing journaled (the filter is complete and lacks them), without noting them.
    func isCertainlyNew(_ user: String) -> Bool {
        isComplete && !filter.mayContain(user)
    }

    /// A copy of the filter when it is complete (a user it lacks has nothing journaled), else nil: the plan of a
    /// batch leaves the others to the writer (`BatchJoinPlan`). A copy, so that the plan reads it on its own
    /// thread whatever the writer does meanwhile.
    package var completeFilter: UserFilter? { isComplete ? filter : nil }

    /// The journal now ends at `lastSeq`, written by this writer's committed batch.
    package func committed(lastSeq: Int64) {
        expectedLastSeq = lastSeq
    }

    /// After a failure whose outcome is unknown: the next transaction starts over.
    package func forget() {
        expectedLastSeq = nil
    }

    /// Adds the journal's next users, reading at most `limit` of them (from `users`, one entry each) in one read
    /// transaction; returns whether more remain.
    package func learn(limit: Int, on connection: Connection) throws -> Bool {
        try connection.readTransaction {
            synchronize(journalLastSeq: try RecordQueries.lastSeq(on: connection))
            guard !isComplete else { return false }
            let scan = try connection.prepare(
                static: "SELECT user FROM users WHERE user > ?1 ORDER BY user LIMIT ?2")
            // Users are never empty (SPEC 3), so "" starts before the first.
            try scan.bind(scannedThrough ?? "", at: 1)
            try scan.bind(Int64(limit), at: 2)
            defer { scan.reset() }
            var entries = 0
            var previous: String?
            while try scan.step() {
                entries += 1
                guard let user = scan.text(0) else { continue }
                if let previous, previous.utf8.elementsEqual(user.utf8) { continue }
                filter.insert(user)
                learnedUsers += 1
                previous = user
            }
            // The last user's remaining entries (if the limit cut them) add nothing: resume after that user.
            if let previous { scannedThrough = previous }
            isComplete = entries < limit
            return !isComplete
        }
    }

    /// The filter's memory.
    package var filterBytes: Int { filter.byteCount }
}
