import OfferTrackDomain
import SQLite
import TestSupport
import Testing

@testable import AttributionJoin
@testable import JournalStore

/// The writer's cache of users' keys (`UserKeyCache`): every record is listed under the key its user has in
/// `users`, whatever renamed, merged, gave or rolled back keys meanwhile, in this writer or another connection.
@Suite struct UserKeyCacheTests {
    static func record(_ id: String, user: String, minute: Int) -> String {
        ErasureLines.record(0, id, minute: minute, user: user)
    }

    static func append(_ writer: JournalWriter, _ lines: [String]) throws -> [AppendOutcome] {
        try writer.append(try ErasureLines.submissions(lines), receivedAt: 0)
    }

    /// Entries of the per-user index (both levels) whose key is not the key of their record's user, and the
    /// number of records the index does not list exactly once.
    /// Expects no entry of the per-user index under another key than its record's user's, and every record
    /// listed exactly once.
    static func expectEveryRecordListedUnderItsUsersKey(
        _ path: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let misfiled = try misfiled(path)
        #expect(misfiled.wrongKey == 0 && misfiled.notListedOnce == 0, "\(misfiled)", sourceLocation: sourceLocation)
    }

    static func misfiled(_ path: String) throws -> (wrongKey: Int64, notListedOnce: Int64) {
        let connection = try Connection(path: path, mode: .readOnly)
        let entries = "SELECT k, seq FROM by_user UNION ALL SELECT k, seq FROM by_user_recent"
        let wrong =
            try connection.scalarInt(
                "SELECT count(*) FROM (\(entries)) b JOIN records r ON r.seq = b.seq "
                    + "LEFT JOIN users u ON u.user = r.user WHERE u.k IS NOT b.k") ?? -1
        let notOnce =
            try connection.scalarInt(
                "SELECT count(*) FROM records r WHERE (SELECT count(*) FROM (\(entries)) b WHERE b.seq = r.seq) != 1")
            ?? -1
        return (wrong, notOnce)
    }

    static func key(of user: String, in path: String) throws -> Int64? {
        let connection = try Connection(path: path, mode: .readOnly)
        return try UserKeys.existingKey(of: user, on: connection)
    }

    @Test func returningUsersAreListedUnderTheirOwnKeys() throws {
        let scratch = ScratchDirectory("key-cache-returning")
        let writer = try JournalWriter(path: scratch.file("j.db"), durability: .normal, schema: .migrate)
        for batch in 0..<6 {
            // Users come back in every batch, interleaved, so that no record follows one of its own user.
            let lines = (0..<40).map { Self.record("r\(batch)-\($0)", user: "user-\($0 % 7)", minute: batch * 40 + $0) }
            #expect(try Self.append(writer, lines).allSatisfy { if case .accepted = $0 { true } else { false } })
        }
        // One slot a user, unless two of them share one (the hash is seeded per process: about once in 3,000
        // runs for 7 users in 65,536 slots), when the later takes it.
        let slots = Set(
            (0..<7).map { Int(truncatingIfNeeded: ByteHash.hash("user-\($0)")) & (writer.caches.userKeys.capacity - 1) }
        )
        #expect(writer.caches.userKeys.count == slots.count)
        try Self.expectEveryRecordListedUnderItsUsersKey(scratch.file("j.db"))
    }

    /// An earlier erasure arriving after a later one renames the person's name again (SPEC 11, one name): the
    /// key the later name had goes to the earlier name, and a record sent under the later name afterwards must not
    /// be listed under it.
    @Test func aNameRenamedAgainIsNotListedUnderItsOldKey() throws {
        let scratch = ScratchDirectory("key-cache-erasure")
        let path = scratch.file("j.db")
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        _ = try Self.append(writer, (0..<3).map { Self.record("v\($0)", user: "victim", minute: $0) })
        let key = try #require(try Self.key(of: "victim", in: path))
        _ = try Self.append(writer, [ErasureLines.erasure("e-late", minute: 400, user: "victim")])
        _ = try Self.append(writer, [Self.record("l1", user: "erased:e-late", minute: 500)])
        #expect(try Self.key(of: "erased:e-late", in: path) == key)
        _ = try Self.append(writer, [ErasureLines.erasure("e-early", minute: 300, user: "victim")])
        #expect(try Self.key(of: "erased:e-early", in: path) == key)
        _ = try Self.append(writer, [Self.record("l2", user: "erased:e-late", minute: 600)])
        try Self.expectEveryRecordListedUnderItsUsersKey(path)
    }

    /// Another writer on the same journal forgets the person: this writer's next record of the name must not
    /// reuse the key it remembered.
    @Test func anotherConnectionsCommitEmptiesTheCache() throws {
        let scratch = ScratchDirectory("key-cache-other")
        let path = scratch.file("j.db")
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        _ = try Self.append(writer, (0..<3).map { Self.record("v\($0)", user: "victim", minute: $0) })
        #expect(writer.caches.userKeys.count == 1)
        let other = try JournalWriter(path: path, durability: .normal)
        _ = try Self.append(other, [ErasureLines.erasure("e1", minute: 10, user: "victim")])
        other.close()
        _ = try Self.append(writer, [Self.record("v9", user: "victim", minute: 20)])
        try Self.expectEveryRecordListedUnderItsUsersKey(path)
    }

    /// A batch that gave a user a key and then failed on a full journal (the writer keeps its connection) rolled
    /// the key back, and its rowid goes to the next new user: the first user's next record must not be listed
    /// under it.
    @Test func aFailedBatchForgetsTheKeysItGave() throws {
        let scratch = ScratchDirectory("key-cache-rollback")
        let path = scratch.file("j.db")
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        _ = try Self.append(writer, [Self.record("a0", user: "first", minute: 0)])
        let connection = try writer.currentConnection()
        let pages = try #require(try connection.scalarInt("PRAGMA page_count"))
        try connection.execute("PRAGMA max_page_count = \(pages)")
        let filler = (0..<400).map { Self.record("f\($0)", user: "filler-\($0)", minute: 2 + $0) }
        let error = #expect(throws: SQLiteError.self) {
            try Self.append(writer, [Self.record("b0", user: "rolled-back", minute: 1)] + filler)
        }
        #expect(error?.isFull == true, "\(String(describing: error))")
        #expect(try writer.currentConnection() === connection)
        #expect(try Self.key(of: "rolled-back", in: path) == nil)
        try connection.execute("PRAGMA max_page_count = 1073741823")
        _ = try Self.append(writer, [Self.record("c0", user: "newcomer", minute: 3)])
        _ = try Self.append(writer, [Self.record("b0", user: "rolled-back", minute: 1)])
        #expect(try Self.key(of: "rolled-back", in: path) != Self.key(of: "newcomer", in: path))
        try Self.expectEveryRecordListedUnderItsUsersKey(path)
    }

    /// More users than slots: each newcomer takes a slot, and every lookup still answers the user's own key.
    @Test func usersSharingASlotKeepTheirOwnKeys() throws {
        let scratch = ScratchDirectory("key-cache-bounded")
        let path = scratch.file("j.db")
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        writer.close()
        let cache = UserKeyCache(capacity: 3)
        #expect(cache.capacity == 4)
        let connection = try Connection(path: path, mode: .readWrite)
        var keys: [Int64] = []
        try connection.transaction {
            try cache.synchronize(on: connection)
            for user in 0..<10 {
                keys.append(try cache.key(of: "u\(user)", knownUsers: KnownUsers(), on: connection))
                #expect(cache.count <= 4)
            }
            for user in (0..<10).reversed() {
                #expect(try cache.key(of: "u\(user)", knownUsers: KnownUsers(), on: connection) == keys[user])
            }
        }
        #expect(Set(keys).count == 10)
        #expect(
            try keys.enumerated().allSatisfy {
                try UserKeys.existingKey(of: "u\($0.offset)", on: connection) == $0.element
            })
    }

    /// A user `KnownUsers` wrongly takes for new (it claims to be complete while empty) already has a key: the
    /// insert finds them, and their own key is answered.
    @Test func aUserWronglyTakenForNewKeepsTheirKey() throws {
        let scratch = ScratchDirectory("key-cache-new")
        let path = scratch.file("j.db")
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        _ = try Self.append(
            writer, [Self.record("a0", user: "old", minute: 0), Self.record("b0", user: "other", minute: 1)])
        writer.close()
        let claimsEmpty = KnownUsers()
        claimsEmpty.synchronize(journalLastSeq: 0)
        #expect(claimsEmpty.isCertainlyNew("old"))
        let connection = try Connection(path: path, mode: .readWrite)
        let cache = UserKeyCache()
        try connection.transaction {
            try cache.synchronize(on: connection)
            #expect(try cache.key(of: "old", knownUsers: claimsEmpty, on: connection) == 1)
            #expect(try cache.key(of: "new", knownUsers: claimsEmpty, on: connection) == 3)
        }
        #expect(try UserKeys.existingKey(of: "new", on: connection) == 3)
    }
}
