/// A string compared and hashed by its exact Unicode scalars (SPEC 3: no normalization), unlike `String`,
/// whose `==` and hashing use canonical equivalence. Use it as a dictionary or set key for ids, users, tokens
/// and member names.
public struct ExactString: Hashable, Sendable {
    /// The string itself.
    public var value: String

    public init(_ value: String) { self.value = value }

    public static func == (lhs: ExactString, rhs: ExactString) -> Bool { ExactString.equals(lhs.value, rhs.value) }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ByteHash.hash(value))
    }

    /// Whether two optional strings are both absent or have the same scalars.
    static func same(_ lhs: String?, _ rhs: String?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case (let l?, let r?): ExactString.equals(l, r)
        default: false
        }
    }
}

extension ExactString {
    // Exact comparison by UTF-8 bytes (that is, by Unicode scalars), never by canonical equivalence as `String.==`
    // does, for the places that compare without building a key.

    /// Whether `a` and `b` have exactly the same scalars.
    public static func equals(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let fast = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in bytesEqual(x, y) }
        }
        return (fast ?? nil) ?? a.utf8.elementsEqual(b.utf8)
    }

    /// Whether `string` is exactly the ASCII or UTF-8 text of `literal`.
    public static func equals(_ string: String, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard string.utf8.count == count else { return false }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        return string.utf8.withContiguousStorageIfAvailable { bytesEqual($0, expected) }
            ?? string.utf8.elementsEqual(expected)
    }

    @inline(__always)
    private static func bytesEqual(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool {
        guard x.count == y.count else { return false }
        for index in 0..<x.count where x[index] != y[index] { return false }
        return true
    }
}
