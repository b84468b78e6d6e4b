import OfferTrackDomain
import Testing

/// SPEC section 10's partition: FNV-1a 32 of the user's UTF-8 bytes, modulo P.
@Suite struct PartitionTests {
    /// The first three are FNV's published test vectors; the rest were computed with an independent
    /// implementation (Python) from the UTF-8 bytes.
    @Test(arguments: [
        ("", UInt32(0x811c_9dc5), 5), ("a", 0xe40c_292c, 12), ("foobar", 0xbf9c_f968, 8), ("u-9f2c", 0x5031_6543, 3),
        ("é", 0x1e9d_e8c1, 1), ("ユーザー", 0x03cd_e6fe, 14), ("u-d9bf17d113f38956", 0x37c2_332c, 12),
    ])
    func fnv1a32Vectors(user: String, hash: UInt32, partitionOf16: Int) {
        #expect(Partition.fnv1a32(user.utf8) == hash)
        #expect(Partition.of(user: user, total: 16) == partitionOf16)
        #expect(Partition.of(user: user, total: 1) == 0)
    }

    @Test func precomposedAndDecomposedUsersAreDifferentBytes() {
        #expect(Partition.fnv1a32("\u{E9}".utf8) != Partition.fnv1a32("e\u{301}".utf8))
        #expect(Partition.subject(7) == "offertrack.records.7")
    }
}
