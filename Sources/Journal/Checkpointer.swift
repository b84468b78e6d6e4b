import Dispatch
import Posix
import SQLite

/// Checkpoints the journal's WAL from its own connection and thread, so that copying pages into the database
/// file (and its fsync) never runs inside a commit the daemon is waiting on to acknowledge.
///
/// The writer runs with `wal_autocheckpoint=0`. A `PASSIVE` checkpoint every `interval` takes no lock the writer
/// needs; when sustained writing keeps it from ever catching up and the WAL passes `restartBytes`, one `RESTART`
/// checkpoint waits for the writer between two commits so the WAL starts over (bounding its size, the shared
/// memory index and the recovery time after a crash). Failures are counted and retried at the next tick.
public final class Checkpointer: @unchecked Sendable {
    // @unchecked: `connection` and `failures` are touched only on `queue`.
    private var connection: Connection?
    private let walPath: String
    private let restartBytes: Int64
    private let queue = DispatchQueue(label: "offertrack.journal-checkpointer")
    private let timer: any DispatchSourceTimer
    private var failures = 0

    /// Starts checkpointing the journal at `path` every `intervalMilliseconds`.
    public init(path: String, intervalMilliseconds: Int = 500, restartBytes: Int64 = 64 << 20) throws {
        let connection = try Connection(path: path, mode: .readWriteCreate)
        connection.setBusyTimeout(milliseconds: 200)
        // One checkpoint now opens the WAL and shared-memory files, so the daemon's descriptors are all open
        // by the time it is ready.
        _ = try connection.scalarText("PRAGMA wal_checkpoint(PASSIVE)")
        self.connection = connection
        walPath = path + "-wal"
        self.restartBytes = restartBytes
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(
            deadline: .now() + .milliseconds(intervalMilliseconds), repeating: .milliseconds(intervalMilliseconds))
        timer.setEventHandler { [weak self] in self?.checkpoint() }
        timer.resume()
    }

    private func checkpoint() {
        guard let connection else { return }
        let mode = (ProcessInfo.fileSize(walPath) ?? 0) > restartBytes ? "RESTART" : "PASSIVE"
        do {
            _ = try connection.scalarText("PRAGMA wal_checkpoint(\(mode))")
        } catch {
            failures += 1
        }
    }

    /// Stops checkpointing and closes the connection, so that the writer's connection, closed last, checkpoints
    /// everything and removes the WAL.
    public func stop() {
        timer.cancel()
        queue.sync { connection = nil }
    }
}
