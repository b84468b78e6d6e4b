/// A string compared and hashed by its exact Unicode scalars (SPEC 3: no normalization), unlike `String`,
/// whose `==` and hashing use canonical equivalence. Use it as a dictionary or set key for ids, users, tokens
/// and member names.
public struct ExactString: Hashable, Sendable {
    /// The string itself.
    public var value: String

    public init(_ value: String) { self.value = value }

    public static func == (lhs: ExactString, rhs: ExactString) -> Bool { ExactText.equals(lhs.value, rhs.value) }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ByteHash.hash(value))
    }

    /// Whether two optional strings are both absent or have the same scalars.
    static func same(_ lhs: String?, _ rhs: String?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case (let l?, let r?): ExactText.equals(l, r)
        default: false
        }
    }
}
