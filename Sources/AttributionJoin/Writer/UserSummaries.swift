import OfferTrackDomain

/// The `UserSummary` of the users this writer joined lately, by user key, so that a returning user's records
/// that come after everything of theirs are joined without reading their history (`JournalWriter+Join`).
///
/// A summary is trusted only while this writer is the one that appended every record since it was made: the
/// cache empties when the journal does not end where this writer left it (`synchronize`), when a batch or a
/// pending rename moves records between users (an erasure, SPEC 11), and after a failed transaction
/// (`WriterCaches.forgetAll`). A seal (SPEC 12) on another connection changes no summary: every user keeps their
/// latest check, latest loaded presentation and first `subscribed` outcome (`SealKeeping`).
///
/// It is direct-mapped by key: `capacity` slots, a user's at their key modulo the capacity (keys are given in
/// sequence, so consecutive users never collide), a newcomer taking the slot of whoever held it. Its memory is
/// fixed whatever the number of users; a user whose slot was taken is joined the long way once, then summarized
/// again.
final class UserSummaries {
    /// Slots: as many as `UserKeyCache` has (a user whose key is not cached costs a lookup anyway), 80 bytes each
    /// (5 MiB), and a check's id of more than 15 bytes on the heap.
    static let defaultCapacity = 65_536
    private struct Slot {
        var key: Int64
        var summary: UserSummary
        /// The cache's `generation` when it was filled: a slot of an earlier one is empty.
        var generation: UInt64
    }
    private var slots: [Slot?]
    private let mask: Int
    private var generation: UInt64 = 0
    /// The journal's last `seq` as this writer left it; nil when unknown (nothing is trusted). Its own, not
    /// `KnownUsers`': that one also synchronizes when it learns users between batches, and would hide from the next
    /// batch that another connection appended.
    private var expectedLastSeq: Int64?

    /// `capacity` is rounded up to a power of two.
    init(capacity: Int = UserSummaries.defaultCapacity) {
        var size = 1
        while size < capacity { size <<= 1 }
        mask = size - 1
        slots = Array(repeating: nil, count: size)
    }

    /// Call at the start of every batch's transaction with `max(seq)` read in it: empties the cache unless the
    /// journal ends at the `seq` this writer's last commit left it at.
    func synchronize(journalLastSeq: Int64) {
        guard journalLastSeq != expectedLastSeq else { return }
        forget()
        expectedLastSeq = journalLastSeq
    }

    /// After a commit that left the journal's last `seq` at `lastSeq`.
    func committed(lastSeq: Int64) { expectedLastSeq = lastSeq }

    /// The summary of the user with `key`, when this cache holds it.
    subscript(key: Int64) -> UserSummary? {
        guard let slot = slots[Int(truncatingIfNeeded: key) & mask], slot.generation == generation, slot.key == key
        else { return nil }
        return slot.summary
    }

    /// Holds `summary` for the user with `key`, in the slot of whoever held it.
    func remember(_ summary: UserSummary, key: Int64) {
        slots[Int(truncatingIfNeeded: key) & mask] = Slot(key: key, summary: summary, generation: generation)
    }

    /// Every summary held, when the cache is trusted (it knows where the journal ends): `lastSeq` and the
    /// summaries by key; nil otherwise.
    var trusted: (lastSeq: Int64, summaries: [(key: Int64, summary: UserSummary)])? {
        guard let expectedLastSeq else { return nil }
        let held = slots.compactMap { slot in
            slot.flatMap { $0.generation == generation ? (key: $0.key, summary: $0.summary) : nil }
        }
        return (expectedLastSeq, held)
    }

    /// Holds the summaries a writer saved when the journal ended at `lastSeq`, where it still ends
    /// (`SavedSummaries.take`), and trusts them from there.
    func adopt(_ summaries: [(Int64, UserSummary)], lastSeq: Int64) {
        forget()
        for (key, summary) in summaries { remember(summary, key: key) }
        expectedLastSeq = lastSeq
    }

    /// Empties the cache (an erasure's rename, a failure, a closed connection, another writer's records).
    func forget() {
        generation &+= 1
        expectedLastSeq = nil
    }
}
