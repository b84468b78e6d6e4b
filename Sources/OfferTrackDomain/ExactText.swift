/// Exact string comparison by UTF-8 bytes (that is, by Unicode scalars), never by canonical equivalence as
/// `String.==` does. SPEC section 3 compares ids, users, tokens and member names this way.
public enum ExactText {
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
