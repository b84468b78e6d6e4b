import CSQLite

/// A failed SQLite call: the extended result code, SQLite's message and the SQL that was running.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The extended result code (`sqlite3_extended_errcode`).
    public let code: Int32
    public let message: String
    public let sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// The primary result code (the low byte of the extended one).
    public var primaryCode: Int32 { code & 0xff }

    /// The database is full (`SQLITE_FULL`).
    public var isFull: Bool { primaryCode == SQLITE_FULL }
    /// Another connection holds the lock past the busy timeout.
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
    /// An I/O error: the file may be in an unknown state; the connection must be reopened.
    public var isIOError: Bool { primaryCode == SQLITE_IOERR }
    /// The database or its directory is read-only (`SQLITE_READONLY`).
    public var isReadOnly: Bool { primaryCode == SQLITE_READONLY }
    /// The file cannot be opened (`SQLITE_CANTOPEN`): typically it or its directory does not exist.
    public var isCannotOpen: Bool { primaryCode == SQLITE_CANTOPEN }
    /// The file is damaged (`SQLITE_CORRUPT`) or not a database (`SQLITE_NOTADB`): no retry helps.
    public var isCorrupt: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " - while executing `\(sql)`" }
        return text
    }
}
