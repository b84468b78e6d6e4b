import Posix
import SQLite

/// `offertrack backup`: an online, consistent copy of the journal, safe while the daemon ingests.
public enum JournalBackup {
    /// What was copied.
    public struct Summary: Sendable {
        public let records: Int64
        public let lastSeq: Int64
    }

    /// Why no backup was made.
    public enum Failure: Error, CustomStringConvertible {
        case destinationExists(String)
        case cannotPlace(String, PosixError)

        public var description: String {
            switch self {
            case .destinationExists(let path): "\(path) exists; a backup never replaces a file"
            case .cannotPlace(let path, let error): "cannot create \(path): \(error)"
            }
        }
    }

    /// Copies the journal at `journal` to the new file `destination` with SQLite's backup API: one read
    /// transaction (never the write lock, so ingest goes on), written to a temporary file beside `destination`
    /// and given its name only once complete and synced. Any schema version is copied as it is. `compact` writes
    /// it with `VACUUM INTO` instead (the same snapshot, only the pages in use: free pages, such as sealing leaves,
    /// are not copied).
    public static func copy(journal: String, to destination: String, compact: Bool = false) throws -> Summary {
        guard !FileSystem.exists(destination) else { throw Failure.destinationExists(destination) }
        let source = try JournalOpening.open(
            path: journal, mode: .readOnly, schema: .anyVersion, busyTimeoutMilliseconds: 5000)
        let partial = destination + ".partial-\(CurrentProcess.pid)"
        let removePartial = { for suffix in ["", "-journal", "-wal", "-shm"] { FileSystem.remove(partial + suffix) } }
        removePartial()
        do {
            let summary: Summary
            do {
                if compact {
                    let vacuum = try source.prepare("VACUUM INTO ?1")
                    try vacuum.bind(partial, at: 1)
                    try vacuum.run()
                    // VACUUM INTO does not sync what it wrote.
                    try FileSystem.syncFile(partial)
                }
                let copy = try Connection(path: partial, mode: compact ? .readWrite : .readWriteCreate)
                try copy.execute("PRAGMA synchronous=FULL")
                if !compact { try source.backup(into: copy) }
                // One self-contained file: readers of the copy leave no -wal/-shm beside it; the daemon turns
                // WAL back on when a restored copy is opened.
                _ = try copy.scalarText("PRAGMA journal_mode=DELETE")
                summary = Summary(
                    records: try copy.scalarInt("SELECT count(*) FROM records") ?? 0,
                    lastSeq: try copy.scalarInt("SELECT coalesce(max(seq), 0) FROM records") ?? 0)
            }
            do {
                try FileSystem.linkWithoutReplacing(partial, as: destination)
            } catch {
                if error.isAlreadyExisting { throw Failure.destinationExists(destination) }  // created meanwhile
                throw Failure.cannotPlace(destination, error)
            }
            removePartial()
            return summary
        } catch {
            removePartial()
            throw error
        }
    }

    /// Makes the journal at `path` one self-contained file, as a backup is: its WAL checkpointed into it and
    /// removed (`journal_mode=DELETE`); a daemon that opens it turns WAL on again. No other connection may be open.
    public static func makeSelfContained(_ path: String) throws {
        let connection = try Connection(path: path, mode: .readWrite)
        _ = try connection.scalarText("PRAGMA journal_mode=DELETE")
    }
}
