import OfferTrackDomain
import SQLite

/// A read-only view of the journal for the CLI. It sees every record committed before it opened.
public final class JournalReader {
    let connection: Connection
    public let path: String

    /// Why the journal cannot be read.
    public enum OpenError: Error, CustomStringConvertible {
        case missing(String)
        case unreadable(String, SQLiteError)
        case notMigrated(String)
        /// The journal's schema is not the one this build reads.
        case otherSchema(String, found: Int64)

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
            }
        }
    }

    /// Opens the journal at `path` read-only. With `requiringCurrentSchema` (every command that reads what the
    /// join derived), a journal of another schema version is refused rather than misread.
    public init(path: String, requiringCurrentSchema: Bool = true) throws(OpenError) {
        self.path = path
        do {
            connection = try Connection(path: path, mode: .readOnly)
            connection.setBusyTimeout(milliseconds: 5000)
            let version = try connection.scalarInt("PRAGMA user_version") ?? 0
            guard version >= 1 else { throw OpenError.notMigrated(path) }
            if requiringCurrentSchema, version != Schema.currentVersion {
                throw OpenError.otherSchema(path, found: version)
            }
        } catch let error as SQLiteError {
            if error.primaryCode == 14 { throw .missing(path) }  // SQLITE_CANTOPEN
            throw .unreadable(path, error)
        } catch let error as OpenError {
            throw error
        } catch {
            throw .notMigrated(path)
        }
    }

    /// Journaled records per type.
    public func countsByType() throws -> [RecordType: Int64] {
        let statement = try connection.prepare("SELECT type, count(*) FROM records GROUP BY type")
        var counts: [RecordType: Int64] = [:]
        for type in RecordType.allCases { counts[type] = 0 }
        while try statement.step() {
            if let type = StoredRecord.type(code: statement.int64(0)) { counts[type] = statement.int64(1) }
        }
        return counts
    }

    /// The highest `seq` journaled (0 when empty).
    public func lastSeq() throws -> Int64 {
        try connection.scalarInt("SELECT coalesce(max(seq), 0) FROM records") ?? 0
    }

    /// The schema version.
    public func schemaVersion() throws -> Int64 {
        try connection.scalarInt("PRAGMA user_version") ?? 0
    }

    /// Whether a table exists (for features added by later migrations).
    func hasTable(_ name: String) throws -> Bool {
        let statement = try connection.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")
        try statement.bind(name, at: 1)
        defer { statement.reset() }
        return try statement.step()
    }
}

extension JournalReader {
    /// The latest published export day (`YYYY-MM-DD`), or nil.
    public func lastPublishedDay() throws -> String? {
        guard try hasTable("published_days") else { return nil }
        return try connection.scalarText("SELECT max(day) FROM published_days")
    }
}
