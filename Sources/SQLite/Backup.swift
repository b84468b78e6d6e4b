import CSQLite

extension Connection {
    /// Copies this whole database into `destination` with SQLite's online backup API in one step: one read
    /// transaction on this connection (under WAL it never blocks a writer), so the copy is a single consistent
    /// snapshot, committed and synced in `destination` before this returns.
    public func backup(into destination: Connection) throws(SQLiteError) {
        guard let backup = sqlite3_backup_init(destination.handle, "main", handle, "main") else {
            throw destination.lastError(sql: nil)
        }
        var rc = sqlite3_backup_step(backup, -1)
        var attempts = 0
        while (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && attempts < 100 {
            sqlite3_sleep(50)
            attempts += 1
            rc = sqlite3_backup_step(backup, -1)
        }
        let finished = sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE else {
            throw SQLiteError(code: rc, message: String(cString: sqlite3_errstr(rc)), sql: "sqlite3_backup_step")
        }
        guard finished == SQLITE_OK else { throw destination.lastError(sql: "sqlite3_backup_finish") }
    }
}
