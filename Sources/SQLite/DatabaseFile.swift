import CSQLite

/// A connection's main database file, read and written past SQLite's pager through the file SQLite opened (never
/// a descriptor of our own: closing one would release the POSIX locks SQLite holds on the file for the whole
/// process). Writing is only safe for bytes SQLite never reads (a page's unused space) and only while the
/// connection holds the write lock with no frame in the WAL, so that no checkpoint can write the same page
/// (`UnusedSpaceScrub`).
public struct DatabaseFile {
    private let connection: Connection
    private let file: UnsafeMutablePointer<sqlite3_file>

    /// The main file of `connection`, which it keeps open.
    public init(_ connection: Connection) throws(SQLiteError) {
        guard let file = offertrack_sqlite_main_file(connection.handle) else {
            throw SQLiteError(code: SQLITE_NOTFOUND, message: "the connection has no main database file")
        }
        self.connection = connection
        self.file = file
    }

    /// The file's size in bytes.
    public func size() throws(SQLiteError) -> Int64 {
        var size: sqlite3_int64 = 0
        try check(offertrack_sqlite_file_size(file, &size), "size")
        return size
    }

    /// Fills `buffer` from `offset`; past the end of the file the rest is zeroed (`SQLITE_IOERR_SHORT_READ`).
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SQLiteError) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        let rc = offertrack_sqlite_file_read(file, base, Int32(buffer.count), offset)
        guard rc == SQLITE_OK || rc == SQLITE_IOERR | (2 << 8) else { throw failure(rc, "read") }
    }

    /// Writes `bytes` at `offset`.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(SQLiteError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        try check(offertrack_sqlite_file_write(file, base, Int32(bytes.count), offset), "write")
    }

    /// Flushes what was written to stable storage.
    public func sync() throws(SQLiteError) {
        try check(offertrack_sqlite_file_sync(file), "sync")
    }

    private func check(_ rc: Int32, _ what: String) throws(SQLiteError) {
        guard rc == SQLITE_OK else { throw failure(rc, what) }
    }

    private func failure(_ rc: Int32, _ what: String) -> SQLiteError {
        SQLiteError(code: rc, message: "cannot \(what) the database file: \(String(cString: sqlite3_errstr(rc)))")
    }
}

extension Connection {
    /// Drops every page this connection caches that no statement holds (`sqlite3_db_release_memory`), so that its
    /// next reads come from the file.
    public func releaseCachedPages() {
        sqlite3_db_release_memory(handle)
    }
}
