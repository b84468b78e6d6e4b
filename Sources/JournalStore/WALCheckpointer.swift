import SQLite

/// How a checkpoint treats the journal's writer and readers (SQLite's `wal_checkpoint` modes).
public enum CheckpointMode: String, Sendable {
    /// Copies what no reader still needs and never waits: the writer goes on committing meanwhile.
    case passive = "PASSIVE"
    /// Waits (up to the busy timeout) for the writer's transaction and for readers of the WAL, holding new
    /// commits back meanwhile, copies every frame, and has the next commit start the WAL over.
    case restart = "RESTART"
    /// As `restart`, and truncates the WAL file to zero bytes.
    case truncate = "TRUNCATE"
}

/// What a checkpoint found and did, in WAL frames.
public struct CheckpointResult: Sendable, Equatable {
    /// Whether the checkpoint could not finish (a blocking one gave up waiting; another checkpoint ran).
    public let busy: Bool
    /// Frames in the WAL when it ran.
    public let walFrames: Int
    /// Frames of the WAL that are now in the database file (by this checkpoint or earlier ones).
    public let checkpointedFrames: Int

    /// Whether every frame of the WAL is now in the database file, so that the next commit starts it over.
    public var isComplete: Bool { !busy && checkpointedFrames >= walFrames }
}

/// Checkpoints the journal's WAL on a connection of its own, so that the writer's connection (and thread) never
/// spends its time on it. Use it from one thread at a time.
public final class WALCheckpointer {
    public let path: String
    private var connection: Connection?

    /// A checkpointer for the journal at `path` (opened at the first checkpoint).
    public init(path: String) {
        self.path = path
    }

    /// Checkpoints in `mode`, waiting at most `busyTimeoutMilliseconds` for each lock a blocking mode needs.
    /// Throws when the checkpoint fails (an I/O error or a full disk writing the database file); the connection is
    /// then reopened at the next call.
    public func checkpoint(_ mode: CheckpointMode, busyTimeoutMilliseconds: Int32) throws -> CheckpointResult {
        do {
            let connection = try currentConnection()
            connection.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
            let statement = try connection.prepare("PRAGMA wal_checkpoint(\(mode.rawValue))")
            defer { statement.reset() }
            guard try statement.step() else {
                throw SQLiteError(code: 1, message: "wal_checkpoint answered no row", sql: statement.sql)
            }
            return CheckpointResult(
                busy: statement.int64(0) != 0, walFrames: Int(statement.int64(1)),
                checkpointedFrames: Int(statement.int64(2)))
        } catch {
            connection = nil
            throw error
        }
    }

    /// Zeroes the unused space of `pages` on the checkpoint connection, right after a `TRUNCATE`
    /// (`UnusedSpaceScrub.scrub`: nothing is written unless the WAL is still empty once the write lock is held).
    package func scrubUnusedSpace(of pages: [Int64]) throws -> UnusedSpaceScrub.Outcome {
        try UnusedSpaceScrub.scrub(pages: pages, walPath: path + "-wal", on: try currentConnection())
    }

    /// Closes the connection (before the writer's, so that the writer's close checkpoints and removes the WAL).
    public func close() {
        connection = nil
    }

    private func currentConnection() throws -> Connection {
        if let connection { return connection }
        let opened = try JournalOpening.open(
            path: path, mode: .readWrite, schema: .anyVersion, busyTimeoutMilliseconds: 0,
            keepsSavedSummaries: true)
        connection = opened
        return opened
    }
}
