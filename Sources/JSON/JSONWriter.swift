import OfferTrackDomain

/// Writes JSON text from `JSONValue`s: compact (no spaces), objects' members in the order given, strings escaped by
/// the one escaper (`JSONStringLiteral`), numbers as their literal text. What the CLI prints as JSON is built here.
public enum JSONWriter {
    /// `value` as compact JSON text.
    public static func text(_ value: JSONValue) -> String {
        var out: [UInt8] = []
        append(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `value` as compact JSON text, in UTF-8.
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        append(value, to: &out)
        return out
    }

    /// Appends `value` as compact JSON text to `out`.
    public static func append(_ value: JSONValue, to out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): out.append(contentsOf: number.literal.utf8)
        case .string(let string): JSONStringLiteral.append(string, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                append(element, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONStringLiteral.append(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                append(member.value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}

extension JSONValue {
    /// An integer, written in decimal.
    public static func integer(_ value: some BinaryInteger) -> JSONValue {
        .number(JSONNumber(literal: String(value)))
    }

    /// `value` as an integer, or `null` when nil.
    public static func integer(_ value: (some BinaryInteger)?) -> JSONValue {
        value.map { integer($0) } ?? .null
    }

    /// A floating-point number as Swift writes it (`0.0`, `1.5`, `2e-05`), or `null` when not finite.
    public static func double(_ value: Double) -> JSONValue {
        value.isFinite ? .number(JSONNumber(literal: "\(value)")) : .null
    }

    /// `value` as a string, or `null` when nil.
    public static func string(_ value: String?) -> JSONValue {
        value.map { .string($0) } ?? .null
    }

    /// An object with `members` in the order given (the caller keeps names unique).
    public static func object(_ members: KeyValuePairs<String, JSONValue>) -> JSONValue {
        .object(JSONObject(members: members.map { (key: $0.key, value: $0.value) }))
    }

    /// An object with `members` in the order given (the caller keeps names unique).
    public static func object(_ members: [(key: String, value: JSONValue)]) -> JSONValue {
        .object(JSONObject(members: members))
    }
}
