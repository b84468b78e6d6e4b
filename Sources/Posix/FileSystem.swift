import Glibc

/// Files, stdout and sleeping, for the CLI.
public enum FileSystem {
    /// Writes every file system's dirty pages to disk (`sync(2)`), for measurements that need a quiet disk.
    public static func syncAll() {
        sync()
    }

    /// Opens `path` read-only; -1 on failure.
    public static func openForReading(_ path: String) -> Int32 {
        open(path, O_RDONLY | O_CLOEXEC)
    }

    /// Reads a whole file, or nil when it cannot be read.
    public static func readFile(_ path: String) -> [UInt8]? {
        let fd = openForReading(path)
        guard fd >= 0 else { return nil }
        defer { FileDescriptor.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }
}

/// Pausing the calling thread.
public enum Sleep {
    public static func milliseconds(_ count: Int) {
        usleep(useconds_t(count * 1000))
    }
}

extension FileDescriptor {
    /// Rewrites the current terminal line on stderr.
    public static func printProgress(_ line: String) {
        try? writeAll(2, Array("\r\u{1b}[K\(line)".utf8))
    }
}

extension FileSystem {
    /// Replaces `path` with `bytes` atomically: writes a temporary file beside it, syncs it, renames it over
    /// `path`, then syncs the directory so the rename itself is durable.
    public static func writeAtomically(_ bytes: [UInt8], to path: String) throws(PosixError) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        let temporary = "\(directory)/.\(name).\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw PosixError("open(\(temporary))", errno: errno) }
        var failure: PosixError?
        do {
            try FileDescriptor.writeAll(fd, bytes)
        } catch {
            failure = error
        }
        if failure == nil && fsync(fd) != 0 { failure = PosixError("fsync(\(temporary))", errno: errno) }
        FileDescriptor.close(fd)
        if let failure {
            unlink(temporary)
            throw failure
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw PosixError("rename(\(path))", errno: code)
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            FileDescriptor.close(directoryFD)
        }
    }
}

extension FileSystem {
    /// Whether anything (a file, a directory, a dangling symlink) is at `path`.
    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Gives the file at `existing` the name `new` too, failing with `EEXIST` rather than replacing anything
    /// (an atomic "rename without clobbering" together with `remove(existing)`), then syncs the directory.
    public static func linkWithoutReplacing(_ existing: String, as new: String) throws(PosixError) {
        _ = try retryingOnInterrupt("link(\(new))") { link(existing, new) }
        syncDirectory(containing: new)
    }

    /// Removes the file at `path`, if any.
    public static func remove(_ path: String) { unlink(path) }

    /// Syncs the directory holding `path`, so that a name created or removed in it is durable.
    public static func syncDirectory(containing path: String) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let fd = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            _ = fsync(fd)
            FileDescriptor.close(fd)
        }
    }
}
