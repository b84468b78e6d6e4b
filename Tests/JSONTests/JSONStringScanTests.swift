import Testing

@testable import JSON
@testable import OfferTrackDomain

/// Strings are scanned eight bytes at a time over plain ASCII: whatever the position of a quote, a backslash, a
/// control character or a non-ASCII byte (inside a word, at its edge, in the tail shorter than a word), the parser
/// answers what a byte-by-byte scan answers, with the same byte offsets.
@Suite struct JSONStringScanTests {
    /// What a string holding `special` after `prefix` plain bytes and before `suffix` plain bytes parses to.
    enum Expected {
        case value([UInt8])
        case failure(String)
    }

    static let specials: [[UInt8]] = [
        [0x00], [0x1F], [0x20], [0x21], [0x22], [0x23], [0x5B], [0x5C, UInt8(ascii: "n")], [0x5D], [0x7E], [0x7F],
        [0x80], [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80], [0xED, 0xA0, 0x80], [0xFF],
    ]

    static func expected(prefix: Int, _ special: [UInt8], suffix: Int) -> Expected {
        let plain = { (count: Int) in (0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) } }
        let at = prefix + 1
        switch special[0] {
        case 0x00..<0x20: return .failure("unescaped control character in string at byte \(at)")
        case 0x22: return .failure("unexpected data after the JSON value at byte \(at + 1)")
        case 0x5C: return .value(plain(prefix) + [0x0A] + plain(suffix))
        case 0x80, 0xED, 0xFF: return .failure("invalid UTF-8 at byte \(at)")
        default: return .value(plain(prefix) + special + plain(suffix))
        }
    }

    @Test(arguments: specials)
    func specialByteAtEveryOffset(_ special: [UInt8]) {
        for prefix in 0..<20 {
            for suffix in [0, 1, 7, 8, 9, 17] {
                let plain = { (count: Int) in (0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) } }
                let line = [0x22] + plain(prefix) + special + plain(suffix) + [0x22]
                let answer: Expected
                do {
                    guard case .string(let string) = try JSONParser.parse(line) else {
                        Issue.record("not a string")
                        return
                    }
                    answer = .value(Array(string.utf8))
                } catch {
                    answer = .failure(String(error.message.dropFirst("the line is not valid JSON: ".count)))
                }
                let expected = Self.expected(prefix: prefix, special, suffix: suffix)
                #expect("\(answer)" == "\(expected)", "prefix \(prefix), suffix \(suffix)")
            }
        }
    }

    @Test func unterminatedStringsOfEveryLength() {
        for length in 0..<20 {
            let line = [0x22] + [UInt8](repeating: UInt8(ascii: "x"), count: length)
            #expect(
                throws: RecordError(
                    .invalidJSON, "the line is not valid JSON: unterminated string at byte \(length + 1)")
            ) {
                try JSONParser.parse(line)
            }
        }
    }

    @Test func memberNamesFindTheirSlots() {
        let names = JSONMemberNames(["type", "id", "ts", "user", "capabilities", "subscription", ""])
        let lookups: [(String, Int?)] = [
            ("type", 0), ("id", 1), ("ts", 2), ("user", 3), ("capabilities", 4), ("subscription", 5), ("", 6),
            ("typ", nil), ("types", nil), ("Type", nil), ("i", nil), ("tz", nil), ("capabilitieS", nil),
            ("subscriptions", nil), ("x", nil), (String(repeating: "a", count: 40), nil),
        ]
        for (name, slot) in lookups {
            var name = name
            #expect(name.withUTF8 { names.slot(of: UnsafeRawBufferPointer($0)) } == slot, "\(name)")
        }
    }
}
