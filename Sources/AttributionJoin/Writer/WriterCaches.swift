import JournalStore
import OfferTrackDomain

/// What the journal's writer remembers between batches so as not to read the journal again. Each is a hint the
/// writer can rebuild from the journal, so forgetting them is always safe and costs only reads: every failure path
/// forgets them all (`forgetAll`), and a batch whose erasures rename users forgets those keyed by a user's name or
/// summarizing their records (`forgetNames`).
///
/// Not here: a recompute for new windows in progress (`JournalWriter.recompute`) is work, not a hint; its state
/// advances only after the commit that did the work, so a failed batch leaves it as it was.
struct WriterCaches {
    /// Which users have records, so that the join skips probing the journal for users it knows are new.
    let knownUsers = KnownUsers()
    /// Returning users' keys, so that their records skip the `users` index.
    let userKeys = UserKeyCache()
    /// What the rules read of returning users' histories, so that records after it skip reading them.
    let summaries = UserSummaries()
    /// Who the journal has forgotten (SPEC section 11), by keyed hash.
    let erasedUsers = ErasedUsers()
    /// The shared-users list each batch's settings were parsed from last.
    var sharedUsersMemo = DerivedTables.SharedUsersMemo()
    /// The first key of the slice of the per-user index the next batch moves to its main level (`UserKeys`); nil:
    /// it starts at the oldest key the recent level holds.
    var sliceCursor: Int64?
    /// Users the last batch refreshed by lookups with a large group (`JournalWriter+Join`): their next group is
    /// not planned as if new, nor their history read to find it long. A hint only: either is done when needed.
    var longHistoryUsers: Set<ExactString> = []
    /// How many groups each path of the join took since the writer was made (counts, not hints: never forgotten).
    var joinCounts = JoinCounts()

    /// Forgets everything: after a failed transaction, a dropped connection, or a close.
    mutating func forgetAll() {
        knownUsers.forget()
        userKeys.forget()
        summaries.forget()
        erasedUsers.forget()
        sharedUsersMemo = DerivedTables.SharedUsersMemo()
        sliceCursor = nil
        longHistoryUsers = []
    }

    /// Forgets what is keyed by a user's name, when an erasure renames users inside the batch (`knownUsers` then
    /// learns the new names from the batch itself).
    mutating func forgetNames() {
        userKeys.forget()
        summaries.forget()
        longHistoryUsers = []
    }
}
