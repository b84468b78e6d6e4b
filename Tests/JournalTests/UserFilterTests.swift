import Testing

@testable import JournalStore

/// The Bloom filter that lets the join skip probing the journal for users it has never seen.
@Suite struct UserFilterTests {
    @Test func everyInsertedUserIsFoundEvenAfterTheFilterGrew() {
        // Expecting 1,024 users and given 40,000: the filter grows by layers and never loses one.
        var filter = UserFilter(expectedUsers: 1024)
        let users = (0..<40_000).map { "u-\($0)" }
        for user in users { filter.insert(user) }
        #expect(users.allSatisfy(filter.mayContain))
        #expect(filter.count <= users.count)
    }

    @Test func fewOthersAreTakenForMembers() {
        var filter = UserFilter(expectedUsers: 1024)
        for index in 0..<40_000 { filter.insert("u-\(index)") }
        let strangers = (0..<40_000).map { "stranger-\($0)" }
        let falsePositives = strangers.filter(filter.mayContain).count
        // About 1% per layer; six layers here. Far from "everything maybe", which would defeat the point.
        #expect(falsePositives < strangers.count * 5 / 100)
    }

    @Test func aRepeatIsNotInsertedTwice() {
        var filter = UserFilter(expectedUsers: 0)
        let first = filter.insert("u-1")
        let again = filter.insert("u-1")
        #expect(first)
        #expect(!again)
        #expect(filter.count == 1)
    }

    @Test func usersAreTheirExactScalars() {
        // "é" precomposed and decomposed are equal as Swift Strings but are two users (SPEC 3).
        var filter = UserFilter(expectedUsers: 0)
        filter.insert("caf\u{E9}")
        #expect(filter.mayContain("caf\u{E9}"))
        #expect(!filter.mayContain("cafe\u{301}"))
    }

    @Test func theHashUsesEveryByte() {
        // Strings sharing an 8-byte block or differing only in the tail hash apart.
        let names = ["", "a", "ab", "abcdefgh", "abcdefghi", "abcdefgj", "bbcdefgh", "abcdefgh\u{0}"]
        let hashes = Set(names.map { UserFilter.hashes($0).first })
        #expect(hashes.count == names.count)
        #expect(names.allSatisfy { UserFilter.hashes($0).step % 2 == 1 })
    }
}
