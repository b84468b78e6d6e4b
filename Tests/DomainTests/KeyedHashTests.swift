import OfferTrackDomain
import Testing

/// The keyed hashes SPEC 11's journal keeps, against their published test vectors.
@Suite struct KeyedHashTests {
    /// SipHash-2-4's reference vectors (the paper's appendix): key 00..0f, messages 00, 00 01, … of length n.
    @Test(arguments: [
        (0, 0x726f_db47_dd0e_0e31 as UInt64), (1, 0x74f8_39c5_93dc_67fd),
        (8, 0x93f5_f579_9a93_2462), (15, 0xa129_ca61_49be_45e5), (63, 0x958a_324c_eb06_4572),
    ])
    func sipHashMatchesTheReference(length: Int, expected: UInt64) {
        let key = (0..<16).map { UInt8($0) }
        let message = (0..<length).map { UInt8($0) }
        #expect(KeyedHash.sipHash(message, key: key) == expected)
    }

    /// RFC 4231 test cases 1, 2 and 6 (a key longer than the block).
    @Test func hmacSHA256MatchesRFC4231() {
        #expect(
            SHA256.hex(KeyedHash.hmacSHA256(Array("Hi There".utf8), key: [UInt8](repeating: 0x0b, count: 20)))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            SHA256.hex(KeyedHash.hmacSHA256(Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            SHA256.hex(
                KeyedHash.hmacSHA256(
                    Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
                    key: [UInt8](repeating: 0xaa, count: 131)))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }
}
