import OfferTrackDomain
import SQLite

/// The keys (`UserKeys`) of the users this writer journaled lately, so that a returning user's record does not
/// search the `users` index for its key.
///
/// A key is trusted only while nothing else can have changed `users` since it was read or given. The cache
/// empties:
/// - at the start of a transaction on another connection than the last one, or after another connection
///   committed (`PRAGMA data_version` moved: a second writer, `offertrack rebuild`, or a checkpoint that truncated
///   the WAL, which is rare and only costs the lookups);
/// - when a batch renames or merges users (an erasure, SPEC 11: the forgotten name loses its key);
/// - after a failed transaction (a key given in it was rolled back, and its rowid may be given to someone else).
///
/// It is direct-mapped: `capacity` slots, a user's by their hash, a newcomer taking the slot of whoever held it.
/// So its memory is fixed whatever the number of users, and a lookup is one hash and one comparison.
package final class UserKeyCache {
    /// Slots: about 2 MiB, and the users' names they hold.
    static let defaultCapacity = 65_536
    let capacity: Int
    private struct Slot {
        var hash: UInt64
        var user: String
        var key: Int64
        /// The cache's `generation` when it was filled: a slot of an earlier one is empty.
        var generation: UInt64
    }
    private var slots: [Slot?]
    private let mask: Int
    /// Emptying the cache starts a new generation instead of clearing every slot (which cost more than a small
    /// batch's other set-up when the cache emptied at every commit, as after each checkpoint that truncated the
    /// WAL under paced traffic).
    private var generation: UInt64 = 0
    /// How many slots hold a user of this generation.
    private(set) var count = 0
    /// The connection and its `data_version` the keys were read on; nil when unknown.
    private var source: (connection: ObjectIdentifier, dataVersion: Int64)?

    /// `capacity` is rounded up to a power of two.
    package init(capacity: Int = UserKeyCache.defaultCapacity) {
        var size = 1
        while size < capacity { size <<= 1 }
        self.capacity = size
        mask = size - 1
        slots = Array(repeating: nil, count: size)
    }

    /// Call at the start of every transaction that looks keys up through the cache (after `BEGIN IMMEDIATE`, so
    /// that `data_version` counts every commit before it): empties the cache unless it was filled on
    /// `connection` and no other connection committed since.
    package func synchronize(on connection: Connection) throws {
        let statement = try connection.prepare(static: "PRAGMA data_version")
        defer { statement.reset() }
        let version = try statement.step() ? statement.int64(0) : -1
        let current = (ObjectIdentifier(connection), version)
        if let source, source == current { return }
        empty()
        source = current
    }

    /// `user`'s key, given now (in the caller's transaction) if the user has none yet (`UserKeys.key`). A user
    /// `knownUsers` is certain is new is given a key without searching for one first (and searched for after all
    /// if the insert finds them).
    func key(of user: String, knownUsers: KnownUsers, on connection: Connection) throws -> Int64 {
        let hash = ByteHash.hash(user)
        let index = Int(truncatingIfNeeded: hash) & mask
        if let slot = slots[index], slot.generation == generation, slot.hash == hash,
            ExactString.equals(slot.user, user)
        {
            return slot.key
        }
        let added = knownUsers.isCertainlyNew(user) ? try UserKeys.addKey(of: user, on: connection) : nil
        let key = try added ?? UserKeys.key(of: user, on: connection)
        if slots[index]?.generation != generation { count += 1 }
        slots[index] = Slot(hash: hash, user: user, key: key, generation: generation)
        return key
    }

    /// Empties the cache and forgets its connection (a rename of users, a failure, a closed connection).
    package func forget() {
        empty()
        source = nil
    }

    private func empty() {
        guard count > 0 else { return }
        generation &+= 1
        count = 0
    }
}
