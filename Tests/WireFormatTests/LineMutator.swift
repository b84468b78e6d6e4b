import JSON
import OfferTrackDomain

/// Seeded mutations of an input line, for comparing the validator's two paths: byte edits anywhere, and edits of the
/// top-level members of a line that parses as an object (repeats, swaps, nulls, escaped and renamed names, unknown
/// members with nested repeats or deep nesting).
enum LineMutator {
    /// Bytes and snippets that make JSON interesting: structure, escapes, bad UTF-8, numbers and literals.
    static let snippets: [[UInt8]] =
        [
            "{", "}", "[", "]", "\"", "\\", ",", ":", " ", "\t", "\r\n", "\\u00", "\\ud800", "\\udc00",
            "\\ud83d\\ude00", "\\u0069", "\\/", "\\n", "null", "true", "tru", "nul", "-", "-0", "01", "1.", "1e",
            "1E+9", "0.5", "NaN", "Infinity", "\"id\":", "\"x\":1,", ",\"id\":null", ",\"ty\\u0070e\":\"review\"",
            "\"\\u0069d\":\"r-2\",", "\u{301}", "\u{e9}", "\u{1F600}", "\u{7F}",
        ].map { Array($0.utf8) }
        + [
            [0x00], [0x1F], [0x80], [0xC0, 0xAF], [0xC3], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF],
            [0xEF, 0xBB, 0xBF],
        ]

    /// The known top-level names, and a few others.
    static let names = [
        "type", "id", "ts", "user", "app", "device", "authorization", "capabilities", "subscription", "offer",
        "loaded", "outcome", "offerId", "conversion", "decision", "reason", "note", "ticket", "appVersion", "x", "",
        "caf\u{e9}", "cafe\u{301}", "Type", "id ",
    ]

    /// `line` with one random edit.
    static func mutate(_ line: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        if random.below(2) == 0, case .object(let object)? = try? JSONParser.parse(line) {
            return encode(mutate(object.members, &random), &random)
        }
        var bytes = line
        let position = bytes.isEmpty ? 0 : random.below(bytes.count + 1)
        switch random.below(4) {
        case 0 where position < bytes.count:
            bytes.remove(at: position)
            if random.below(2) == 0, position < bytes.count { bytes.remove(at: position) }
        case 1 where position < bytes.count:
            bytes[position] = snippets[random.below(snippets.count)].first ?? 0
        default:
            bytes.insert(contentsOf: snippets[random.below(snippets.count)], at: position)
        }
        return bytes
    }

    typealias Members = [(key: String, value: JSONValue)]

    static func mutate(_ members: Members, _ random: inout SplitMix64) -> Members {
        var members = members
        let some = members.isEmpty ? 0 : random.below(members.count)
        switch random.below(8) {
        case 0 where !members.isEmpty:
            members.insert(members[some], at: random.below(members.count + 1))
        case 1 where members.count >= 2:
            members.swapAt(some, random.below(members.count))
        case 2 where !members.isEmpty:
            members[some].value = .null
        case 3 where !members.isEmpty:
            members[some].key = names[random.below(names.count)]
        case 4:
            members.insert((names[random.below(names.count)], nested(&random)), at: random.below(members.count + 1))
        case 5 where !members.isEmpty:
            members.remove(at: some)
        case 6:
            // Many unknown members (past the parser's 16-member switch to a set), maybe one repeated.
            for index in 0..<(16 + random.below(8)) {
                members.append(("k\(index % 20)", .number(JSONNumber(literal: "1"))))
            }
        default:
            members.insert(("n\(random.below(3))", .null), at: random.below(members.count + 1))
        }
        return members
    }

    /// A value for an unknown member: nested objects (maybe with a repeated name) and arrays, near the depth limit.
    static func nested(_ random: inout SplitMix64) -> JSONValue {
        switch random.below(4) {
        case 0:
            let name = names[random.below(names.count)]
            return .object(JSONObject(members: [(name, .bool(true)), (names[random.below(names.count)], .null)]))
        case 1:
            var value = JSONValue.string("deep")
            for _ in 0..<(JSONParser.maximumDepth - 2 + random.below(4)) { value = .array([value]) }
            return value
        case 2:
            return .array([
                .object(JSONObject(members: [("a", .number(JSONNumber(literal: "-0.5e+3"))), ("a", .null)]))
            ])
        default:
            return .string("\u{0}\u{1F}\"\\ \u{e9}")
        }
    }

    /// The members written back as an object, some names with characters escaped as `\uXXXX`.
    static func encode(_ members: Members, _ random: inout SplitMix64) -> [UInt8] {
        var out = Array("{".utf8)
        for (index, member) in members.enumerated() {
            if index > 0 { out.append(contentsOf: random.below(4) == 0 ? Array(" ,\n ".utf8) : Array(",".utf8)) }
            if random.below(6) == 0 {
                out.append(UInt8(ascii: "\""))
                for scalar in member.key.unicodeScalars {
                    if random.below(2) == 0 {
                        for unit in String(scalar).utf16 { out.append(contentsOf: Array("\\u\(hex4(unit))".utf8)) }
                    } else {
                        out.append(
                            contentsOf: Array(JSONStringLiteral.quote(String(scalar)).utf8.dropFirst().dropLast()))
                    }
                }
                out.append(UInt8(ascii: "\""))
            } else {
                JSONStringLiteral.append(member.key, to: &out)
            }
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: encode(member.value))
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    static func encode(_ value: JSONValue) -> [UInt8] {
        switch value {
        case .null: return Array("null".utf8)
        case .bool(let flag): return Array((flag ? "true" : "false").utf8)
        case .number(let number): return Array(number.literal.utf8)
        case .string(let string):
            var out: [UInt8] = []
            JSONStringLiteral.append(string, to: &out)
            return out
        case .array(let elements):
            return Array("[".utf8) + elements.map(encode).joined(separator: [UInt8(ascii: ",")]) + Array("]".utf8)
        case .object(let object):
            var random = SplitMix64(seed: UInt64(object.members.count))
            return encode(object.members, &random)
        }
    }

    static func hex4(_ unit: UInt16) -> String {
        let digits = String(unit, radix: 16)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }
}
