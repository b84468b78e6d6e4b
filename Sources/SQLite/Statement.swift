import CSQLite

/// A prepared statement owned by its connection's cache; finalized when released.
public final class Statement {
    private let pointer: OpaquePointer
    private unowned let connection: Connection
    /// The statement's SQL, for error messages.
    public let sql: String
    /// Whether it has been stepped since it was last reset (SQLite refuses bindings until it is reset).
    private var isStepped = false
    /// The parameters it has, when few enough for the masks below (bit `index - 1`); nil when there are more, and
    /// reuse clears every binding at once instead.
    private let trackedParameters: Int32?
    /// Parameters that may hold a value other than NULL.
    private var parametersHoldingValues: UInt64 = 0
    /// Parameters bound since the statement was last handed out by its connection's cache.
    private var parametersBoundSinceReuse: UInt64 = 0
    /// Whether the parameters left unbound since that reuse must still be set to NULL before the next step.
    private var nullsStaleParametersBeforeStep = false
    /// Copies of its bound texts and blobs, which SQLite reads in place; freed after it is finalized.
    private let boundValues: BoundValueBuffers

    init(pointer: OpaquePointer, connection: Connection, sql: String) {
        self.pointer = pointer
        self.connection = connection
        self.sql = sql
        let parameters = sqlite3_bind_parameter_count(pointer)
        trackedParameters = Int(parameters) <= UInt64.bitWidth ? parameters : nil
        boundValues = BoundValueBuffers(parameters: Int(parameters))
    }

    deinit {
        sqlite3_finalize(pointer)
        boundValues.deallocate()
    }

    /// Resets the statement so it can run again (bindings are kept); nothing to do when it has not run since.
    public func reset() {
        guard isStepped else { return }
        sqlite3_reset(pointer)
        isStepped = false
    }

    /// Sets every parameter back to NULL.
    public func clearBindings() {
        sqlite3_clear_bindings(pointer)
        parametersHoldingValues = 0
        nullsStaleParametersBeforeStep = false
    }

    /// Readies a cached statement for its next user as if it were freshly prepared: reset, and every parameter the
    /// user does not bind NULL when it runs. Parameters bound again simply replace their old values; only those
    /// left unbound are set to NULL, just before the next step, which spares walking (and freeing) every parameter
    /// as `sqlite3_clear_bindings` does on each reuse.
    func prepareForReuse() {
        reset()
        guard trackedParameters != nil else {
            clearBindings()
            return
        }
        parametersBoundSinceReuse = 0
        nullsStaleParametersBeforeStep = true
    }

    /// Notes that parameter `index` has been bound (see `prepareForReuse`).
    @inline(__always)
    private func noteBound(_ index: Int32) {
        guard let trackedParameters, index >= 1, index <= trackedParameters else { return }
        let bit: UInt64 = 1 << UInt64(index - 1)
        parametersBoundSinceReuse |= bit
        parametersHoldingValues |= bit
    }

    /// Sets to NULL the parameters that held a value before the last reuse and were not bound since.
    private func nullStaleParameters() throws(SQLiteError) {
        nullsStaleParametersBeforeStep = false
        var stale = parametersHoldingValues & ~parametersBoundSinceReuse
        parametersHoldingValues = parametersBoundSinceReuse
        while stale != 0 {
            try check(sqlite3_bind_null(pointer, Int32(stale.trailingZeroBitCount + 1)))
            stale &= stale - 1
        }
    }

    /// Binds an integer to the 1-based parameter `index`.
    public func bind(_ value: Int64, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(pointer, index, value))
        noteBound(index)
    }

    /// Binds text (copied) to the 1-based parameter `index`; nil binds NULL.
    public func bind(_ value: String?, at index: Int32) throws(SQLiteError) {
        guard let value else {
            try check(sqlite3_bind_null(pointer, index))
            noteBound(index)
            return
        }
        var copy = value
        try check(copy.withUTF8 { utf8 in bindCopy(of: UnsafeRawBufferPointer(utf8), at: index, asText: true) })
        noteBound(index)
    }

    /// Binds UTF-8 bytes as text (copied) to the 1-based parameter `index`.
    public func bindText(_ bytes: [UInt8], at index: Int32) throws(SQLiteError) {
        try check(bytes.withUnsafeBytes { raw in bindCopy(of: raw, at: index, asText: true) })
        noteBound(index)
    }

    /// Binds bytes as a blob (copied) to the 1-based parameter `index`.
    public func bindBlob(_ bytes: [UInt8], at index: Int32) throws(SQLiteError) {
        try check(bytes.withUnsafeBytes { raw in bindCopy(of: raw, at: index, asText: false) })
        noteBound(index)
    }

    /// Binds a copy of `bytes` as text or as a blob: the statement's own (`boundValues`) when it keeps one, which
    /// SQLite reads in place, else one SQLite makes. Its own copy is only written while the statement is not
    /// running (SQLite refuses bindings then, and may still be reading the copy).
    private func bindCopy(of bytes: UnsafeRawBufferPointer, at index: Int32, asText: Bool) -> Int32 {
        var source = bytes.baseAddress
        var destructor = offertrack_sqlite_transient()
        if !isStepped, let kept = boundValues.copy(bytes, to: index, unbind: { unbind(index) }) {
            source = kept
            destructor = nil  // `SQLITE_STATIC`: SQLite reads the statement's copy in place.
        }
        guard let source else {
            return asText
                ? sqlite3_bind_text(pointer, index, "", 0, destructor) : sqlite3_bind_zeroblob(pointer, index, 0)
        }
        let count = Int32(bytes.count)
        return asText
            ? sqlite3_bind_text(pointer, index, source.assumingMemoryBound(to: CChar.self), count, destructor)
            : sqlite3_bind_blob(pointer, index, source, count, destructor)
    }

    /// Sets parameter `index` to NULL (without noting it: its caller binds it again); whether SQLite did.
    private func unbind(_ index: Int32) -> Bool { sqlite3_bind_null(pointer, index) == SQLITE_OK }

    /// Binds an optional integer; nil binds NULL.
    public func bind(_ value: Int64?, at index: Int32) throws(SQLiteError) {
        guard let value else {
            try check(sqlite3_bind_null(pointer, index))
            noteBound(index)
            return
        }
        try bind(value, at: index)
    }

    /// Steps once: true when a row is available, false when done. Throws on any other result.
    public func step() throws(SQLiteError) -> Bool {
        if nullsStaleParametersBeforeStep { try nullStaleParameters() }
        isStepped = true
        switch sqlite3_step(pointer) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.lastError(sql: sql)
            reset()
            throw error
        }
    }

    /// Steps to completion, ignoring rows, and resets.
    public func run() throws(SQLiteError) {
        defer { reset() }
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

    /// Calls `body` with column `index`'s bytes as SQLite holds them (valid only during the call; empty for NULL).
    public func withBytes<Result>(
        _ index: Int32, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) rethrows -> Result {
        // The pointer first, then its length (SQLite's advice: no conversion can move the bytes in between).
        let base = sqlite3_column_blob(pointer, index)
        let count = Int(sqlite3_column_bytes(pointer, index))
        guard let base, count > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: base, count: count))
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
