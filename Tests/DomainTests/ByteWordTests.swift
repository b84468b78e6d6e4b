import Testing

@testable import OfferTrackDomain

/// The word-at-a-time tests against byte-at-a-time ones, and `Token.measure` (which uses them) against a count of
/// the scalars.
@Suite struct ByteWordTests {
    /// Every byte value at every position of a word of other bytes: flagged exactly when it matches, and first
    /// when no lower byte matches.
    @Test(arguments: [UInt8(ascii: "a"), 0x20, 0x7E, 0x22])
    func everyByteAtEveryPosition(_ filler: UInt8) {
        for position in 0..<8 {
            for value in 0...255 {
                var bytes = [UInt8](repeating: filler, count: 8)
                bytes[position] = UInt8(value)
                let word = bytes.withUnsafeBytes { ByteWord.load($0.baseAddress!, at: 0) }
                let tests: [(UInt64, (UInt8) -> Bool)] = [
                    (ByteWord.nonASCII(word), { $0 >= 0x80 }),
                    (ByteWord.bytes(of: word, below: 0x20), { $0 < 0x20 }),
                    (ByteWord.bytes(of: word, below: 0x80), { $0 < 0x80 }),
                    (ByteWord.bytes(of: word, equalTo: 0x22), { $0 == 0x22 }),
                    (ByteWord.bytes(of: word, equalTo: 0x7F), { $0 == 0x7F }),
                    (ByteWord.bytes(of: word, equalTo: 0x00), { $0 == 0x00 }),
                ]
                for (index, (mask, matches)) in tests.enumerated() {
                    let first = bytes.firstIndex(where: matches)
                    #expect((mask == 0) == (first == nil), "test \(index), byte \(value) at \(position)")
                    if let first, mask != 0 {
                        #expect(ByteWord.firstFlagged(mask) == first, "test \(index), byte \(value) at \(position)")
                    }
                }
            }
        }
    }

    /// `Token.measure` on seeded strings of printable ASCII, controls, U+0080–U+009F and other scalars.
    @Test func measureCountsScalarsAndControls() {
        let scalars: [Unicode.Scalar] = [
            "a", " ", "~", "\u{0}", "\u{1F}", "\u{7F}", "\u{80}", "\u{9F}", "\u{A0}", "\u{C2}", "\u{E9}", "\u{20AC}",
            "\u{1F600}",
        ]
        var state: UInt64 = 0x5EED
        for _ in 0..<5_000 {
            var text = String.UnicodeScalarView()
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let length = Int(state >> 59)
            for _ in 0..<length {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                // Mostly plain ASCII, so that words are taken whole.
                let pick = Int(state >> 56)
                text.append(pick < 200 ? "a" : scalars[pick % scalars.count])
            }
            let string = String(text)
            let control = string.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
            let measured = Token.measure(string)
            #expect(
                measured.scalars == string.unicodeScalars.count && measured.hasControl == control,
                "\(string.debugDescription)")
        }
    }
}
