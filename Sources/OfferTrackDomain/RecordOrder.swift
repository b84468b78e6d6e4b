/// The journal order of SPEC section 4: by `ts`, then by `id` compared as UTF-8 bytes.
public enum RecordOrder {
    /// Whether an `(ts, id)` pair sorts strictly before another.
    @inlinable
    public static func precedes(ts lhsTs: Int64, id lhsId: String, ts rhsTs: Int64, id rhsId: String) -> Bool {
        if lhsTs != rhsTs { return lhsTs < rhsTs }
        return idPrecedes(lhsId, rhsId)
    }

    /// Whether `lhs` sorts strictly before `rhs` by their UTF-8 bytes (not by `String`'s `<`).
    @inlinable
    public static func idPrecedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    /// Whether record `lhs` sorts strictly before record `rhs`.
    @inlinable
    public static func precedes(_ lhs: Record, _ rhs: Record) -> Bool {
        precedes(ts: lhs.ts, id: lhs.id, ts: rhs.ts, id: rhs.id)
    }
}
