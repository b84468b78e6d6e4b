/// Writes strings as JSON string literals (RFC 8259): the one escaper, for response lines and JSON output.
public enum JSONStringLiteral {
    /// `value` quoted and escaped: `"` and `\` backslashed, control characters below U+0020 escaped.
    public static func quote(_ value: String) -> String {
        guard value.withContiguousUTF8(needsEscape) else { return "\"" + value + "\"" }
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count + 8)
        append(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `value` quoted and escaped (as `quote` does) as UTF-8 bytes.
    public static func append(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        value.withContiguousUTF8 { bytes in
            // Most values (ids, messages) need no escape: one copy of all their bytes.
            if needsEscape(bytes) { appendEscaped(bytes, to: &out) } else { out.append(contentsOf: bytes) }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether `bytes` hold a character that must be escaped: a control character, `"` or `\`.
    private static func needsEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
    }

    private static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): out.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): out.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): out.append(contentsOf: #"\t"#.utf8)
            case 0x08: out.append(contentsOf: #"\b"#.utf8)
            case 0x0C: out.append(contentsOf: #"\f"#.utf8)
            case 0..<0x20:
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0xf)])
            default: out.append(byte)
            }
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
