import OfferTrackDomain

/// Renames the person a record line names (SPEC section 11): the line's top-level `user` member gets another
/// string, and every other byte of the line stays as it was (member order, spacing, escapes, unknown members).
public enum UserMemberRewrite {
    /// `line` (a valid record: one JSON object whose members are unique) with its top-level `user` value replaced
    /// by `name`; nil when the line has no top-level `user` string.
    public static func renaming(_ line: [UInt8], to name: String) -> [UInt8]? {
        guard let span = userValueSpan(line) else { return nil }
        return Array(line[..<span.lowerBound]) + Array(JSONStringLiteral.quote(name).utf8)
            + Array(line[span.upperBound...])
    }

    /// The line's top-level `user` string, decoded; nil when it has none.
    public static func user(of line: [UInt8]) -> String? {
        guard let span = userValueSpan(line), case .string(let user)? = try? JSONParser.parse(Array(line[span]))
        else { return nil }
        return user
    }

    /// The byte range of the top-level `user` member's value (a string, quotes included).
    static func userValueSpan(_ line: [UInt8]) -> Range<Int>? {
        var scanner = Scanner(bytes: line)
        scanner.skipSpace()
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        while true {
            scanner.skipSpace()
            guard let keyRange = scanner.string() else { return nil }
            scanner.skipSpace()
            guard scanner.take(UInt8(ascii: ":")) else { return nil }
            scanner.skipSpace()
            let valueStart = scanner.position
            guard scanner.value() else { return nil }
            if line[valueStart] == UInt8(ascii: "\""), decodedEquals(line[keyRange], "user") {
                return valueStart..<scanner.position
            }
            scanner.skipSpace()
            guard scanner.take(UInt8(ascii: ",")) else { return nil }
        }
    }

    /// Whether a key's raw bytes (between its quotes) decode to `expected` (ASCII, no escapes needed).
    private static func decodedEquals(_ raw: ArraySlice<UInt8>, _ expected: StaticString) -> Bool {
        guard raw.contains(UInt8(ascii: "\\")) else {
            return raw.elementsEqual(UnsafeBufferPointer(start: expected.utf8Start, count: expected.utf8CodeUnitCount))
        }
        // A key spelled with escapes: decode it through the parser.
        guard case .string(let decoded)? = try? JSONParser.parse([UInt8(ascii: "\"")] + raw + [UInt8(ascii: "\"")])
        else { return false }
        return ExactString.equals(decoded, expected)
    }

    /// A cursor over a valid JSON text that skips values without decoding them.
    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        mutating func skipSpace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        /// Skips a string; returns the range between its quotes.
        mutating func string() -> Range<Int>? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = position
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\\"): position += 2
                case UInt8(ascii: "\""):
                    position += 1
                    return start..<(position - 1)
                default: position += 1
                }
            }
            return nil
        }

        /// Skips one value of any kind.
        mutating func value() -> Bool {
            guard position < bytes.count else { return false }
            switch bytes[position] {
            case UInt8(ascii: "\""):
                return string() != nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while position < bytes.count {
                    switch bytes[position] {
                    case UInt8(ascii: "\""):
                        guard string() != nil else { return false }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 {
                            position += 1
                            return true
                        }
                    default: break
                    }
                    position += 1
                }
                return false
            default:
                // A number or a literal: up to the next delimiter.
                while position < bytes.count,
                    ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D].contains(
                        bytes[position])
                {
                    position += 1
                }
                return true
            }
        }
    }
}
