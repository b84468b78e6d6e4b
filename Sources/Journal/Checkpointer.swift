import Dispatch
import SQLite

/// Checkpoints the journal's WAL from its own connection and thread, so that copying pages into the database
/// file (and its fsync) never runs inside a commit the daemon is waiting on to acknowledge.
///
/// The writer runs with `wal_autocheckpoint=0`; a `PASSIVE` checkpoint every `interval` takes no lock the writer
/// needs. Failures are counted and retried at the next tick; the WAL only grows meanwhile.
public final class Checkpointer: @unchecked Sendable {
    // @unchecked: `connection` and `failures` are touched only on `queue`.
    private let connection: Connection
    private let queue = DispatchQueue(label: "offertrack.journal-checkpointer")
    private let timer: any DispatchSourceTimer
    private var failures = 0

    /// Starts checkpointing the journal at `path` every `intervalMilliseconds`.
    public init(path: String, intervalMilliseconds: Int = 500) throws {
        connection = try Connection(path: path, mode: .readWriteCreate)
        // One checkpoint now opens the WAL and shared-memory files, so the daemon's descriptors are all open
        // by the time it is ready.
        _ = try connection.scalarText("PRAGMA wal_checkpoint(PASSIVE)")
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(
            deadline: .now() + .milliseconds(intervalMilliseconds), repeating: .milliseconds(intervalMilliseconds))
        timer.setEventHandler { [weak self] in self?.checkpoint() }
        timer.resume()
    }

    private func checkpoint() {
        do {
            _ = try connection.scalarText("PRAGMA wal_checkpoint(PASSIVE)")
        } catch {
            failures += 1
        }
    }

    /// Stops the timer and waits for a running checkpoint to finish.
    public func stop() {
        timer.cancel()
        queue.sync {}
    }
}
