import OfferTrackDomain

/// A parsed JSON value. Objects keep their members in input order (duplicates are refused by the parser).
/// Not `indirect`: arrays and objects already store their elements out of line, so scalars need no box.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number, kept as its literal text so nothing is lost to floating point.
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// A JSON number literal, exactly as written (e.g. `-12`, `3.50`, `1e3`).
public struct JSONNumber: Sendable, Equatable {
    /// The literal's text.
    public let literal: String

    public init(literal: String) { self.literal = literal }

    /// The value when the literal is a plain integer (no fraction, no exponent) that fits in `Int64`.
    public var int64Value: Int64? {
        guard !literal.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) else { return nil }
        return Int64(literal)
    }
}

/// A JSON object: its members in input order.
public struct JSONObject: Sendable, Equatable {
    public var members: [(key: String, value: JSONValue)]

    public init(members: [(key: String, value: JSONValue)]) { self.members = members }

    /// The value of member `key`, or nil when absent.
    public subscript(key: String) -> JSONValue? {
        for member in members where member.key == key { return member.value }
        return nil
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}
