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
        lhs.withContiguousUTF8 { a in rhs.withContiguousUTF8 { b in bytesPrecede(a, b) } }
    }

    /// Whether `a` sorts strictly before `b`, byte by byte, a prefix first.
    @usableFromInline
    static func bytesPrecede(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        for index in 0..<min(a.count, b.count) where a[index] != b[index] { return a[index] < b[index] }
        return a.count < b.count
    }

    /// Whether record `lhs` sorts strictly before record `rhs`.
    @inlinable
    public static func precedes(_ lhs: Record, _ rhs: Record) -> Bool {
        precedes(ts: lhs.ts, id: lhs.id, ts: rhs.ts, id: rhs.id)
    }

    /// `records` in journal order, as `records.sorted(by: precedes)` puts them (equal records keep their order),
    /// sorting positions rather than moving whole records (strings and all) at every step of the sort.
    public static func sorted(_ records: [Record]) -> [Record] {
        order(records).map { records[$0] }
    }

    /// The positions of `records` in journal order: `sorted(records)` is `order(records).map { records[$0] }`.
    public static func order(_ records: [Record]) -> [Int] {
        records.withUnsafeBufferPointer { records in
            // Already in order (each record at or after the one before): the positions as they are.
            if records.indices.dropFirst().allSatisfy({ !precedes(records[$0], records[$0 - 1]) }) {
                return Array(records.indices)
            }
            return records.indices.sorted { lhs, rhs in
                if records[lhs].ts != records[rhs].ts { return records[lhs].ts < records[rhs].ts }
                if idPrecedes(records[lhs].id, records[rhs].id) { return true }
                // Equal (ts, id): keep the input order, so the result never depends on the sort's stability.
                return !idPrecedes(records[rhs].id, records[lhs].id) && lhs < rhs
            }
        }
    }
}
