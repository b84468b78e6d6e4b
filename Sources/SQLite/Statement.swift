import CSQLite

/// A prepared statement owned by its connection's cache; finalized when released.
public final class Statement {
    private let pointer: OpaquePointer
    private unowned let connection: Connection
    /// The statement's SQL, for error messages.
    public let sql: String

    init(pointer: OpaquePointer, connection: Connection, sql: String) {
        self.pointer = pointer
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(pointer) }

    /// Resets the statement so it can run again (bindings are kept).
    public func reset() { sqlite3_reset(pointer) }

    /// Sets every parameter back to NULL.
    public func clearBindings() { sqlite3_clear_bindings(pointer) }

    /// Binds an integer to the 1-based parameter `index`.
    public func bind(_ value: Int64, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(pointer, index, value))
    }

    /// Binds text (copied) to the 1-based parameter `index`; nil binds NULL.
    public func bind(_ value: String?, at index: Int32) throws(SQLiteError) {
        guard let value else {
            try check(sqlite3_bind_null(pointer, index))
            return
        }
        var copy = value
        let rc = copy.withUTF8 { utf8 in
            sqlite3_bind_text(
                pointer, index, UnsafeRawPointer(utf8.baseAddress).map { $0.assumingMemoryBound(to: CChar.self) },
                Int32(utf8.count), offertrack_sqlite_transient())
        }
        try check(rc)
    }

    /// Binds UTF-8 bytes as text (copied) to the 1-based parameter `index`.
    public func bindText(_ bytes: [UInt8], at index: Int32) throws(SQLiteError) {
        let rc = bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else {
                return sqlite3_bind_text(pointer, index, "", 0, offertrack_sqlite_transient())
            }
            return sqlite3_bind_text(
                pointer, index, base.assumingMemoryBound(to: CChar.self), Int32(raw.count),
                offertrack_sqlite_transient())
        }
        try check(rc)
    }

    /// Binds bytes as a blob (copied) to the 1-based parameter `index`.
    public func bindBlob(_ bytes: [UInt8], at index: Int32) throws(SQLiteError) {
        let rc = bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return sqlite3_bind_zeroblob(pointer, index, 0) }
            return sqlite3_bind_blob(pointer, index, base, Int32(raw.count), offertrack_sqlite_transient())
        }
        try check(rc)
    }

    /// Binds an optional integer; nil binds NULL.
    public func bind(_ value: Int64?, at index: Int32) throws(SQLiteError) {
        guard let value else {
            try check(sqlite3_bind_null(pointer, index))
            return
        }
        try bind(value, at: index)
    }

    /// Steps once: true when a row is available, false when done. Throws on any other result.
    public func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(pointer) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.lastError(sql: sql)
            sqlite3_reset(pointer)
            throw error
        }
    }

    /// Steps to completion, ignoring rows, and resets.
    public func run() throws(SQLiteError) {
        defer { sqlite3_reset(pointer) }
        while try step() {}
    }

    /// Column `index` (0-based) of the current row as an integer.
    public func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(pointer, index) }

    /// How many columns a row of this statement has.
    public var columnCount: Int32 { sqlite3_column_count(pointer) }

    /// Whether column `index` of the current row is NULL.
    public func isNull(_ index: Int32) -> Bool { sqlite3_column_type(pointer, index) == SQLITE_NULL }

    /// Column `index` of the current row as text; nil when NULL.
    public func text(_ index: Int32) -> String? {
        guard let bytes = sqlite3_column_text(pointer, index) else { return nil }
        let count = Int(sqlite3_column_bytes(pointer, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// Column `index` of the current row as raw bytes (text or blob).
    public func bytes(_ index: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(pointer, index))
        guard count > 0, let base = sqlite3_column_blob(pointer, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    private func check(_ rc: Int32) throws(SQLiteError) {
        guard rc == SQLITE_OK else { throw connection.lastError(sql: sql) }
    }
}
