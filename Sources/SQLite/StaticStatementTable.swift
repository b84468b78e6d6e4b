/// A connection's statements of static SQL, keyed by the address of the SQL literal. An open-addressing table
/// whose lookup costs a multiplication and a comparison or two: the hot path prepares several static statements a
/// record, and a `Dictionary` would run `Hasher` over the address every time.
struct StaticStatementTable {
    private struct Entry {
        var key: UnsafeRawPointer?
        var statement: Statement?
    }

    /// A power of two, at most half full, so every probe ends at an empty entry.
    private var entries = [Entry](repeating: Entry(), count: 64)
    private var count = 0

    /// The statement cached for `key`, or nil.
    @inline(__always)
    func statement(for key: UnsafeRawPointer) -> Statement? {
        var index = Self.home(of: key, mask: entries.count - 1)
        while let candidate = entries[index].key {
            if candidate == key { return entries[index].statement }
            index = (index + 1) & (entries.count - 1)
        }
        return nil
    }

    /// Caches `statement` for `key`, replacing any statement cached for it.
    mutating func insert(_ statement: Statement, for key: UnsafeRawPointer) {
        if (count + 1) * 2 > entries.count { grow() }
        var index = Self.home(of: key, mask: entries.count - 1)
        while let candidate = entries[index].key, candidate != key {
            index = (index + 1) & (entries.count - 1)
        }
        if entries[index].key == nil { count += 1 }
        entries[index] = Entry(key: key, statement: statement)
    }

    /// Drops every statement.
    mutating func removeAll() {
        entries = [Entry](repeating: Entry(), count: entries.count)
        count = 0
    }

    private mutating func grow() {
        let old = entries
        entries = [Entry](repeating: Entry(), count: old.count * 2)
        count = 0
        for entry in old {
            if let key = entry.key, let statement = entry.statement { insert(statement, for: key) }
        }
    }

    /// The entry a key's probe starts at: Fibonacci hashing, the product's high bits (literals are aligned, so
    /// the address's low bits alone would crowd a few entries).
    @inline(__always)
    private static func home(of key: UnsafeRawPointer, mask: Int) -> Int {
        let product = UInt64(UInt(bitPattern: key)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: product >> 32) & mask
    }
}
