import CSQLite

/// One SQLite connection. Not thread-safe: use it from one thread at a time.
public final class Connection {
    /// The opaque sqlite3 handle.
    let handle: OpaquePointer
    private var statementCache: [String: Statement] = [:]
    /// Statements of static SQL, keyed by the literal's address: no hashing of the SQL text on the hot path.
    private var staticStatementCache = StaticStatementTable()
    /// Kept alive while SQLite's WAL hook points at it.
    fileprivate var walFrameCount: WALFrameCount?

    /// How a connection is opened.
    public enum Mode: Sendable {
        case readOnly
        /// Read-write, failing with `SQLITE_CANTOPEN` when the file does not exist.
        case readWrite
        case readWriteCreate
    }

    /// Whether SQLite's memory statistics were turned off, which is done once per process, before its first
    /// connection opens (see `offertrack_sqlite_disable_memory_statistics`). False when SQLite had already been
    /// initialized, which only leaves them on: nothing reads them.
    static let memoryStatisticsOff = offertrack_sqlite_disable_memory_statistics() == SQLITE_OK

    /// Opens (and with `.readWriteCreate`, creates) the database at `path`.
    public init(path: String, mode: Mode) throws(SQLiteError) {
        _ = Self.memoryStatisticsOff
        var pointer: OpaquePointer?
        let flags: Int32 =
            switch mode {
            case .readOnly: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
            case .readWrite: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
            case .readWriteCreate: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
            }
        let rc = sqlite3_open_v2(path, &pointer, flags, nil)
        guard let pointer else {
            throw SQLiteError(code: rc, message: "cannot allocate a connection to \(path)")
        }
        guard rc == SQLITE_OK else {
            let error = SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(pointer)) + " (\(path))")
            sqlite3_close_v2(pointer)
            throw error
        }
        handle = pointer
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit {
        staticStatementCache.removeAll()
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Waits up to about `milliseconds` for another connection's lock before failing with `SQLITE_BUSY`, trying
    /// again every millisecond (SQLite's own timeout backs off to 100 ms between tries, so a writer behind a run
    /// of short transactions could wait far longer than any one of them).
    public func setBusyTimeout(milliseconds: Int32) {
        offertrack_sqlite_poll_when_busy(handle, milliseconds)
    }

    /// Runs one or more statements that return no rows we need.
    public func execute(_ sql: String) throws(SQLiteError) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw lastError(sql: sql) }
    }

    /// Runs a statement and returns its first column of its first row as text (for pragmas).
    public func scalarText(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try prepare(sql)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.text(0)
    }

    /// Runs a statement and returns its first column of its first row as an integer.
    public func scalarInt(_ sql: String) throws(SQLiteError) -> Int64? {
        try Self.firstInt(of: try prepare(sql))
    }

    /// Runs `sql` with `value` bound to `?1` and returns its first column of its first row as an integer; nil when
    /// it has no row or the column is NULL.
    public func scalarInt(_ sql: String, binding value: Int64) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        try statement.bind(value, at: 1)
        return try Self.firstInt(of: statement)
    }

    /// The same with a text bound to `?1`.
    public func scalarInt(_ sql: String, binding value: String) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        try statement.bind(value, at: 1)
        return try Self.firstInt(of: statement)
    }

    private static func firstInt(of statement: Statement) throws(SQLiteError) -> Int64? {
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.int64(0)
    }

    /// A prepared statement for `sql`, cached and reused on later calls: reset, and any parameter the caller leaves
    /// unbound is NULL when it runs, as in a fresh statement.
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        if let cached = statementCache[sql] {
            cached.prepareForReuse()
            return cached
        }
        var pointer: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &pointer, nil)
        guard rc == SQLITE_OK, let pointer else { throw lastError(sql: sql) }
        let statement = Statement(pointer: pointer, connection: self, sql: sql)
        statementCache[sql] = statement
        return statement
    }

    /// A prepared statement for a static `sql` literal, cached by the literal's address (the hot-path variant of
    /// `prepare`: looking it up costs a pointer hash, not a hash of the SQL text).
    public func prepare(static sql: StaticString) throws(SQLiteError) -> Statement {
        let key = UnsafeRawPointer(sql.utf8Start)
        if let cached = staticStatementCache.statement(for: key) {
            cached.prepareForReuse()
            return cached
        }
        let statement = try prepare(sql.description)
        staticStatementCache.insert(statement, for: key)
        return statement
    }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE` takes the write lock at once); rolls back if it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try inTransaction(begin: "BEGIN IMMEDIATE", body)
    }

    /// Runs `body` in a read transaction (`BEGIN DEFERRED`): every statement in it sees the same snapshot.
    public func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try inTransaction(begin: "BEGIN DEFERRED", body)
    }

    private func inTransaction<T>(begin: String, _ body: () throws -> T) throws -> T {
        try execute(begin)
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            rollbackIfActive()
            throw error
        }
    }

    /// Rolls back the open transaction, if SQLite has not already done so (after `SQLITE_FULL` it may have).
    public func rollbackIfActive() {
        if sqlite3_get_autocommit(handle) == 0 {
            _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
        }
    }

    /// Whether a transaction is open.
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// The rowid of the last inserted row.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the last statement.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    func lastError(sql: String?) -> SQLiteError {
        SQLiteError(code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }
}

/// How many frames the WAL holds after the last commit (reported by SQLite's WAL hook).
public final class WALFrameCount: @unchecked Sendable {
    // @unchecked: written by SQLite's hook on the connection's thread, read on the same thread.
    public var frames: Int32 = 0
    public init() {}
}

extension Connection {
    /// Has SQLite report the WAL's size in frames to `counter` after every commit. This replaces the automatic
    /// checkpoint (which runs from the same hook), so the caller checkpoints when `counter.frames` grows.
    public func countWALFrames(into counter: WALFrameCount) {
        walFrameCount = counter
        sqlite3_wal_hook(
            handle,
            { context, _, _, frames in
                if let context { Unmanaged<WALFrameCount>.fromOpaque(context).takeUnretainedValue().frames = frames }
                return SQLITE_OK
            }, Unmanaged.passUnretained(counter).toOpaque())
    }
}
