import Posix
import TestSupport
import Testing

/// `NeedleSet` finds what a search for each needle with `memmem` finds: cases by hand (keys shorter than four bytes,
/// needles sharing a prefix or a key, at either end of the haystack, longer than it), each as given (few needles:
/// `memmem`) and with needles found nowhere added (the one-pass search), then random haystacks of a small alphabet
/// (many near misses) against `ByteSearch.contains` of each needle.
@Suite struct NeedleSetTests {
    /// Needles that no haystack below holds, enough to take the set past `memmemLimit`.
    static let absent = (0...NeedleSet.memmemLimit).map { "\u{7f}absent-\($0)\u{7f}" }

    static func occurs(_ needles: [String], in haystack: String) -> (few: Bool, many: Bool) {
        Array(haystack.utf8).withUnsafeBytes { bytes in
            (
                NeedleSet(needles.map { Array($0.utf8) }).occurs(in: bytes),
                NeedleSet((needles + absent).map { Array($0.utf8) }).occurs(in: bytes)
            )
        }
    }

    @Test(
        arguments: [
            ([], "anything", false),
            ([""], "anything", false),
            (["abc"], "xxabcxx", true),
            (["abc"], "xxabxcx", false),
            (["u-1234", "u-1235", "u-1299"], "user u-1235!", true),
            (["u-1234", "u-1235", "u-1299"], "user u-1236 u-123", false),
            // A key (the last four bytes) shared by two needles: only the whole one counts.
            (["xx-0001", "yy-0001", "zz-0002"], "ww-0001 zz-000", false),
            (["xx-0001", "yy-0001", "zz-0002"], "ww-0001 yy-0001", true),
            // The shortest needle sets a two-byte key.
            (["ab", "abcdef", "zzzz"], "xab", true),
            (["ab", "abcdef", "zzzz"], "xa", false),
            (["q", "abcdef", "zzzz"], "q", true),
            // At the very start and the very end.
            (["start", "other", "third"], "start of it", true),
            (["end!", "other", "third"], "the end!", true),
            // Longer than the haystack.
            (["a-long-needle", "b-long-needle", "c-long-needle"], "needle", false),
        ] as [([String], String, Bool)])
    func findsWhatItShould(needles: [String], haystack: String, expected: Bool) {
        let found = Self.occurs(needles, in: haystack)
        #expect(found.few == expected)
        #expect(found.many == expected)
    }

    @Test func findsWhatMemmemFinds() {
        var generator = SeededGenerator.announced("needle set")
        let alphabet = Array("ab-01".utf8) + [0, 255]
        func word(_ length: Int) -> [UInt8] { (0..<length).map { _ in alphabet.randomElement(using: &generator)! } }
        var found = 0
        for _ in 0..<2_000 {
            let needles = (0..<Int.random(in: 1...40, using: &generator)).map { _ in
                word(Int.random(in: 1...10, using: &generator))
            }
            let haystack = word(Int.random(in: 0...200, using: &generator))
            let expected = haystack.withUnsafeBytes { bytes in needles.contains { ByteSearch.contains($0, in: bytes) } }
            let actual = haystack.withUnsafeBytes { NeedleSet(needles).occurs(in: $0) }
            #expect(actual == expected, "needles \(needles), haystack \(haystack)")
            if expected { found += 1 }
        }
        // Both answers came up often enough for the comparison to mean something. These draws hold a needle about
        // 1,770 times in 2,000 (1,731–1,797 in 30 simulated runs, a spread of 13): 1,800 was crossed about once in a
        // hundred runs, 1,900 is ten spreads away.
        #expect(found > 200 && found < 1_900, "\(found) of 2,000 held a needle")
    }

    /// `ByteSearch.isZero`, by hand: none, zeros only at every length up to 70 (glibc's `memcmp` takes other paths
    /// past 16 and 32 bytes), and one byte other than zero at each position of those.
    @Test func isZeroOnlyForZerosOnly() {
        #expect([UInt8]().withUnsafeBytes { ByteSearch.isZero($0) })
        for length in 1...70 {
            let zeros = [UInt8](repeating: 0, count: length)
            #expect(zeros.withUnsafeBytes { ByteSearch.isZero($0) }, "\(length) zeros")
            for position in 0..<length {
                var bytes = zeros
                bytes[position] = position % 2 == 0 ? 1 : 0x80
                #expect(!bytes.withUnsafeBytes { ByteSearch.isZero($0) }, "length \(length), byte \(position)")
            }
        }
    }
}
