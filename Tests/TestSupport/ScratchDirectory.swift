import Foundation

/// A temporary directory for one test or benchmark run, removed when released (kept when the environment has
/// `OFFERTRACK_KEEP_SCRATCH`, to read a failed run's logs and journals).
public final class ScratchDirectory {
    public let path: String

    /// Creates `<base>/<label>-<random>-<pid>`; `exists` says whether that worked.
    public init(_ label: String, base: String = "/tmp") {
        let path = "\(base)/\(label)-\(UInt32.random(in: 0...UInt32.max))-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        self.path = path
    }

    deinit {
        guard ProcessInfo.processInfo.environment["OFFERTRACK_KEEP_SCRATCH"] == nil else { return }
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Whether the directory was created (and is still there).
    public var exists: Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// A path inside the directory.
    public func file(_ name: String) -> String { "\(path)/\(name)" }

    /// Removes a SQLite database and its `-wal`/`-shm` companions.
    public func removeDatabase(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
