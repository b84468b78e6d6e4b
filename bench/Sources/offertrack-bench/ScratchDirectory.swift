import Foundation

/// A directory on the real disk (not tmpfs: fsync must cost what it costs) for one run, removed at the end.
final class ScratchDirectory {
    let path: String

    init() throws(BenchFailure) {
        let base = Foundation.ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        path = "\(base)/offertrack-bench-\(getpid())"
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw BenchFailure("cannot create the scratch directory \(path): \(error)")
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A path inside the directory.
    func file(_ name: String) -> String { "\(path)/\(name)" }

    /// Removes a SQLite database and its `-wal`/`-shm` companions.
    func removeDatabase(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
