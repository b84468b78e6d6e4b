import OfferTrackDomain

/// A strict RFC 8259 JSON parser over UTF-8 bytes, implementing SPEC section 2's `invalid_json` rules.
///
/// It refuses invalid UTF-8 (overlong forms, encoded surrogates, scalars above U+10FFFF), repeated member names
/// (compared by their exact scalars after unescaping), non-JSON literals (`NaN`, `Infinity`), lone surrogate
/// escapes, leading zeros, unescaped control characters, trailing commas, trailing garbage, a byte order mark and
/// nesting deeper than ``maximumDepth``. Numbers keep their literal text.
public struct JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    public static let maximumDepth = 64

    /// Parses exactly one JSON value, optionally surrounded by RFC 8259 whitespace.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(RecordError) -> JSONValue {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            throw RecordError(.invalidJSON, "the line is empty, not a JSON value")
        }
        var parser = JSONParser(base: base, count: bytes.count)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.count else {
            throw parser.failure("unexpected data after the JSON value")
        }
        return value
    }

    /// Parses exactly one JSON value from `bytes`, like the `UnsafeRawBufferPointer` overload.
    public static func parse(_ bytes: [UInt8]) throws(RecordError) -> JSONValue {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(RecordError) -> JSONValue in try parse(buffer) }
        }
        return try result.get()
    }

    let base: UnsafeRawPointer
    let count: Int
    var index = 0
    /// Reused buffer for strings that contain escapes.
    var scratch: [UInt8] = []

    init(base: UnsafeRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    @inline(__always)
    func byte(_ offset: Int) -> UInt8 { base.load(fromByteOffset: offset, as: UInt8.self) }

    func failure(_ message: String) -> RecordError {
        RecordError(.invalidJSON, "the line is not valid JSON: \(message) at byte \(index)")
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < count {
            switch byte(index) {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(RecordError) -> JSONValue {
        guard index < count else { throw failure("unexpected end of input") }
        switch byte(index) {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try parseNumber())
        default:
            throw failure("unexpected character")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(RecordError) {
        let length = literal.utf8CodeUnitCount
        guard count - index >= length else { throw failure("unknown literal") }
        let expected = literal.utf8Start
        for offset in 0..<length where byte(index + offset) != expected[offset] {
            throw failure("unknown literal")
        }
        index += length
    }

    private mutating func parseObject(depth: Int) throws(RecordError) -> JSONValue {
        guard depth <= Self.maximumDepth else { throw failure("nesting deeper than \(Self.maximumDepth) levels") }
        index += 1
        skipWhitespace()
        var members: [(key: String, value: JSONValue)] = []
        members.reserveCapacity(8)
        if index < count, byte(index) == UInt8(ascii: "}") {
            index += 1
            return .object(JSONObject(members: members))
        }
        var seen: Set<ExactString>?
        while true {
            guard index < count, byte(index) == UInt8(ascii: "\"") else { throw failure("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard index < count, byte(index) == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            if isRepeated(key, in: members, seen: &seen) {
                throw failure("repeated member name")
            }
            members.append((key, value))
            if try endOfObjectAfterMember() { return .object(JSONObject(members: members)) }
        }
    }

    /// After a member's value: past a `,` (and the whitespace after it), false; past the object's `}`, true.
    mutating func endOfObjectAfterMember() throws(RecordError) -> Bool {
        skipWhitespace()
        guard index < count else { throw failure("unterminated object") }
        switch byte(index) {
        case UInt8(ascii: ","):
            index += 1
            skipWhitespace()
            return false
        case UInt8(ascii: "}"):
            index += 1
            return true
        default:
            throw failure("expected ',' or '}'")
        }
    }

    /// Whether `key` is already a member name, comparing exact scalars (never canonical equivalence).
    private func isRepeated(
        _ key: String, in members: [(key: String, value: JSONValue)], seen: inout Set<ExactString>?
    ) -> Bool {
        if members.count < 16 {
            // By index: iterating the members would copy each value (and retain and release it) only to compare keys.
            for index in members.indices where ExactString.equals(members[index].key, key) { return true }
            return false
        }
        if seen == nil { seen = Set(members.map { ExactString($0.key) }) }
        return seen?.insert(ExactString(key)).inserted == false
    }

    private mutating func parseArray(depth: Int) throws(RecordError) -> JSONValue {
        guard depth <= Self.maximumDepth else { throw failure("nesting deeper than \(Self.maximumDepth) levels") }
        index += 1
        skipWhitespace()
        var elements: [JSONValue] = []
        if index < count, byte(index) == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < count else { throw failure("unterminated array") }
            switch byte(index) {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default:
                throw failure("expected ',' or ']'")
            }
        }
    }

    private mutating func parseNumber() throws(RecordError) -> JSONNumber {
        let start = index
        try scanNumber()
        return JSONNumber(literal: makeString(from: start, to: index))
    }

    /// Checks the number literal at `index` and moves past it.
    mutating func scanNumber() throws(RecordError) {
        if byte(index) == UInt8(ascii: "-") { index += 1 }
        guard index < count, isDigit(byte(index)) else { throw failure("invalid number") }
        if byte(index) == UInt8(ascii: "0") {
            index += 1
            if index < count, isDigit(byte(index)) { throw failure("leading zero in number") }
        } else {
            skipDigits()
        }
        if index < count, byte(index) == UInt8(ascii: ".") {
            index += 1
            guard index < count, isDigit(byte(index)) else { throw failure("invalid number fraction") }
            skipDigits()
        }
        if index < count, byte(index) | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < count, byte(index) == UInt8(ascii: "+") || byte(index) == UInt8(ascii: "-") { index += 1 }
            guard index < count, isDigit(byte(index)) else { throw failure("invalid number exponent") }
            skipDigits()
        }
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    private mutating func skipDigits() {
        while index < count, isDigit(byte(index)) { index += 1 }
    }

    private func makeString(from start: Int, to end: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(start: base + start, count: end - start), as: UTF8.self)
    }

    /// Parses a string starting at its opening quote; the fast path builds it straight from the input bytes.
    private mutating func parseString() throws(RecordError) -> String {
        let start = index + 1
        if try scanString() { return String(decoding: scratch, as: UTF8.self) }
        return makeString(from: start, to: index - 1)
    }

    /// Checks the string starting at its opening quote and moves past its closing quote. True when it has escapes:
    /// then its unescaped bytes are in `scratch`; otherwise they are the input's between the quotes.
    mutating func scanString() throws(RecordError) -> Bool {
        index += 1
        let start = index
        while index < count {
            if count - index >= 8 {
                // Eight bytes at a time over plain ASCII; the first other byte is then read one at a time.
                let special = Self.specialBytes(ByteWord.load(base, at: index))
                if special == 0 {
                    index += 8
                    continue
                }
                index += ByteWord.firstFlagged(special)
            }
            let current = byte(index)
            if current == UInt8(ascii: "\"") {
                index += 1
                return false
            } else if current == UInt8(ascii: "\\") {
                try scanEscapedString(from: start)
                return true
            } else if current < 0x20 {
                throw failure("unescaped control character in string")
            } else if current < 0x80 {
                index += 1
            } else {
                index += try utf8SequenceLength(at: index)
            }
        }
        throw failure("unterminated string")
    }

    /// The bytes of `word` that are not plain string content: a quote, a backslash, a control character, or not ASCII.
    @inline(__always)
    private static func specialBytes(_ word: UInt64) -> UInt64 {
        ByteWord.nonASCII(word) | ByteWord.bytes(of: word, below: 0x20)
            | ByteWord.bytes(of: word, equalTo: UInt8(ascii: "\""))
            | ByteWord.bytes(of: word, equalTo: UInt8(ascii: "\\"))
    }

    /// The slow path for strings with escapes: unescapes into `scratch`.
    private mutating func scanEscapedString(from start: Int) throws(RecordError) {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeRawBufferPointer(start: base + start, count: index - start))
        while index < count {
            let current = byte(index)
            if current == UInt8(ascii: "\"") {
                index += 1
                return
            } else if current == UInt8(ascii: "\\") {
                try parseEscape()
            } else if current < 0x20 {
                throw failure("unescaped control character in string")
            } else if current < 0x80 {
                scratch.append(current)
                index += 1
            } else {
                let length = try utf8SequenceLength(at: index)
                for offset in 0..<length { scratch.append(byte(index + offset)) }
                index += length
            }
        }
        throw failure("unterminated string")
    }

    private mutating func parseEscape() throws(RecordError) {
        guard index + 1 < count else { throw failure("unterminated escape") }
        let escaped = byte(index + 1)
        index += 2
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(escaped)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if scalar >= 0xDC00 && scalar <= 0xDFFF {
                throw failure("lone low surrogate escape")
            }
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                guard index + 1 < count, byte(index) == UInt8(ascii: "\\"), byte(index + 1) == UInt8(ascii: "u")
                else { throw failure("lone high surrogate escape") }
                index += 2
                let low = try parseHex4()
                guard low >= 0xDC00 && low <= 0xDFFF else { throw failure("lone high surrogate escape") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            appendUTF8(scalar)
        default:
            throw failure("invalid escape")
        }
    }

    private mutating func parseHex4() throws(RecordError) -> UInt32 {
        guard count - index >= 4 else { throw failure("truncated \\u escape") }
        var value: UInt32 = 0
        for offset in 0..<4 {
            let digit = byte(index + offset)
            let nibble: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = digit - UInt8(ascii: "A") + 10
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | UInt32(nibble)
        }
        index += 4
        return value
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// The length of the well-formed UTF-8 sequence (Unicode Table 3-7) whose lead byte (≥ 0x80) is at `offset`.
    private func utf8SequenceLength(at offset: Int) throws(RecordError) -> Int {
        let lead = byte(offset)
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            high = 0x9F
        case 0xF0:
            length = 4
            low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            high = 0x8F
        default: throw failure("invalid UTF-8")
        }
        guard count - offset >= length else { throw failure("invalid UTF-8") }
        let second = byte(offset + 1)
        guard second >= low && second <= high else { throw failure("invalid UTF-8") }
        for continuation in 2..<length where byte(offset + continuation) & 0xC0 != 0x80 {
            throw failure("invalid UTF-8")
        }
        return length
    }
}
