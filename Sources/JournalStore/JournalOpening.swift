import SQLite

/// What opening the journal may do about its schema version. Only the daemon and `rebuild` migrate: every
/// other command refuses a journal of another version, so that a command of a new build never migrates the
/// journal under a daemon of the old one.
public enum SchemaPolicy: Sendable, Equatable {
    /// Create the journal when absent and apply every migration it lacks (the daemon, `offertrack rebuild`).
    case migrate
    /// Refuse a journal of any other version than this build's, or one never migrated.
    case requireCurrent
    /// Read any migrated version (`status`, which reads only what every version has).
    case anyVersion
}

/// Why the journal cannot be opened.
public enum JournalOpenError: Error, CustomStringConvertible {
    case missing(String)
    case unreadable(String, SQLiteError)
    case notMigrated(String)
    /// The journal's schema is not the one this build reads.
    case otherSchema(String, found: Int64)
    /// The file is not a database, or SQLite found it damaged.
    case corrupt(String, String)

    public var description: String {
        switch self {
        case .missing(let path): "no journal at \(path)"
        case .unreadable(let path, let error): "cannot read the journal \(path): \(error)"
        case .notMigrated(let path): "\(path) is not an offertrack journal (or was never started)"
        case .otherSchema(let path, let found) where found < Schema.currentVersion:
            "the journal \(path) has schema \(found) and this offertrack reads \(Schema.currentVersion): "
                + "start the offertrackd of this version (or run offertrack rebuild) to migrate it"
        case .otherSchema(let path, let found):
            "the journal \(path) has schema \(found), newer than this offertrack reads "
                + "(\(Schema.currentVersion)): use the offertrack that came with the running offertrackd"
        case .corrupt(let path, let details):
            "the journal \(path) is corrupt (\(details)): stop offertrackd and restore the latest backup "
                + "(offertrack backup; see docs/operating.md, \"Backups\")"
        }
    }
}

/// The one way every command and the daemon open the journal.
public enum JournalOpening {
    /// Opens the journal at `path`; with `.readOnly` it must exist. Under `.migrate` the caller migrates
    /// (after configuring the connection); under the other policies the version is checked here. A connection
    /// that may write forgets the summaries the last writer saved (`SavedSummaries`), unless `keepsSavedSummaries`:
    /// the writer, which takes them itself, and the checkpointer, which changes no content.
    public static func open(
        path: String, mode: Connection.Mode, schema: SchemaPolicy, busyTimeoutMilliseconds: Int32,
        keepsSavedSummaries: Bool = false
    ) throws(JournalOpenError) -> Connection {
        do {
            let connection = try Connection(path: path, mode: mode)
            connection.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
            if schema != .migrate {
                let version = try connection.scalarInt("PRAGMA user_version") ?? 0
                guard version >= 1 else { throw JournalOpenError.notMigrated(path) }
                if schema == .requireCurrent, version != Schema.currentVersion {
                    throw JournalOpenError.otherSchema(path, found: version)
                }
            }
            if mode != .readOnly, !keepsSavedSummaries { try SavedSummaries.forget(on: connection) }
            return connection
        } catch let error as SQLiteError {
            throw classify(error, path: path)
        } catch let error as JournalOpenError {
            throw error
        } catch {
            throw .notMigrated(path)
        }
    }

    /// The open error an SQLite failure means.
    public static func classify(_ error: SQLiteError, path: String) -> JournalOpenError {
        if error.isCorrupt { return .corrupt(path, error.message) }
        if error.isCannotOpen { return .missing(path) }
        return .unreadable(path, error)
    }

    /// SQLite's message when `error` says the journal is damaged (not a passing failure), else nil.
    public static func corruption(in error: any Error) -> String? {
        if let error = error as? SQLiteError, error.isCorrupt { return "\(error)" }
        if case .corrupt(_, let details)? = error as? JournalOpenError { return details }
        return nil
    }

    /// What kind of failure `error` (from opening, migrating or writing the journal) is, so that a command can
    /// give each its own exit code.
    public static func kind(of error: any Error) -> FailureKind {
        switch error {
        case let error as JournalOpenError:
            switch error {
            case .missing: return .missing
            case .corrupt: return .corrupt
            case .otherSchema, .notMigrated: return .otherSchema
            case .unreadable(_, let sqlite): return kind(of: sqlite)
            }
        case is Schema.NewerSchemaError: return .otherSchema
        case let error as SQLiteError:
            if error.isCorrupt { return .corrupt }
            if error.isBusy { return .busy }
            if error.isFull { return .full }
            if error.isIOError { return .ioError }
            if error.isReadOnly { return .readOnly }
            if error.isCannotOpen { return .missing }
            return .other
        default: return .other
        }
    }

    /// Kinds of journal failure, each a different remedy.
    public enum FailureKind: Sendable {
        case missing, corrupt, otherSchema, busy, full, ioError, readOnly, other
    }

    /// `PRAGMA quick_check` on a connection of its own (so that the writer's page cache stays cold and a page
    /// damaged later is still read from disk): nil when the journal is sound, else what SQLite found. A
    /// journal that does not exist yet is sound.
    public static func quickCheck(path: String) throws(JournalOpenError) -> String? {
        let connection: Connection
        do {
            connection = try Connection(path: path, mode: .readWrite)
        } catch {
            if error.isCannotOpen { return nil }  // absent: the daemon creates it
            throw classify(error, path: path)
        }
        do {
            connection.setBusyTimeout(milliseconds: 30_000)
            var problems: [String] = []
            let statement = try connection.prepare("PRAGMA quick_check(20)")
            while try statement.step() { problems.append(statement.text(0) ?? "") }
            return problems == ["ok"] ? nil : problems.joined(separator: "; ")
        } catch {
            if error.isCorrupt { return error.message }
            throw classify(error, path: path)
        }
    }
}
