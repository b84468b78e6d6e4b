import Glibc

/// Files, stdout and sleeping, for the CLI.
public enum FileSystem {
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
            let read = chunk.withUnsafeMutableBytes { try? FileDescriptor.read(fd, into: $0) }
            guard case .transferred(let count)? = read else { return nil }
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
    /// Replaces `path` with `bytes` atomically (see `OutputDirectory.writeAtomically`), in `path`'s directory.
    public static func writeAtomically(_ bytes: [UInt8], to path: String) throws(PosixError) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        let output = try OutputDirectory(opening: directory.isEmpty ? "/" : directory)
        try output.writeAtomically(bytes, named: name)
    }
}

/// A directory opened once, into which files are replaced atomically relative to its descriptor (`openat`,
/// `renameat`): a path component swapped for a symlink after the check cannot redirect the writes.
public final class OutputDirectory {
    /// Why a directory is not a safe place to write into.
    public enum Refusal: Error, Sendable, CustomStringConvertible {
        case notADirectory(String, PosixError)
        /// Owned by another user than the caller or root: its owner could plant files or links in it.
        case foreignOwner(String, uid: UInt32)

        public var description: String {
            switch self {
            case .notADirectory(let path, let error): "\(path) is not a directory (\(error))"
            case .foreignOwner(let path, let uid): "\(path) is owned by uid \(uid), neither this user nor root"
            }
        }
    }

    public let path: String
    private let fd: Int32

    /// Opens `path`, which must be a directory (a symlink to one is followed once, here).
    public init(opening path: String) throws(PosixError) {
        self.path = path
        fd = try valueOrErrno("open(\(path))") { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    }

    /// Opens `path` and checks it is a directory owned by this process's user or root.
    public static func ownedByUserOrRoot(_ path: String) throws(Refusal) -> OutputDirectory {
        let directory: OutputDirectory
        do { directory = try OutputDirectory(opening: path) } catch { throw .notADirectory(path, error) }
        var info = stat()
        do {
            _ = try valueOrErrno("fstat") { fstat(directory.fd, &info) }
        } catch {
            throw .notADirectory(path, error)
        }
        guard info.st_uid == geteuid() || info.st_uid == 0 else { throw .foreignOwner(path, uid: info.st_uid) }
        return directory
    }

    deinit { FileDescriptor.close(fd) }

    /// Replaces `name` with `bytes`: writes a new file under an unpredictable temporary name (created with
    /// `O_EXCL|O_NOFOLLOW`, so a planted file or symlink is never written through), syncs it, renames it over
    /// `name` (which replaces a symlink there rather than following it), then syncs the directory.
    public func writeAtomically(_ bytes: [UInt8], named name: String) throws(PosixError) {
        var temporary = ""
        var file: Int32 = -1
        for _ in 0..<8 {
            temporary = ".\(name).\(String(UInt64.random(in: 0...UInt64.max), radix: 36)).tmp"
            file = openat(fd, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if file >= 0 || (errno != EEXIST && errno != EINTR) { break }
        }
        guard file >= 0 else { throw PosixError.last("openat(\(path)/\(temporary))") }
        var failure: PosixError?
        do {
            try FileDescriptor.writeAll(file, bytes)
        } catch {
            failure = error
        }
        if failure == nil && fsync(file) != 0 { failure = PosixError.last("fsync(\(path)/\(temporary))") }
        FileDescriptor.close(file)
        if failure == nil && renameat(fd, temporary, fd, name) != 0 {
            failure = PosixError.last("renameat(\(path)/\(name))")
        }
        if let failure {
            unlinkat(fd, temporary, 0)
            throw failure
        }
        _ = fsync(fd)
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
        _ = try valueOrErrno("link(\(new))") { link(existing, new) }
        syncDirectory(containing: new)
    }

    /// Writes the file at `path` to its disk (`fsync`), for files another library wrote without syncing them.
    public static func syncFile(_ path: String) throws(PosixError) {
        let fd = try valueOrErrno("open(\(path))") { open(path, O_RDONLY | O_CLOEXEC) }
        defer { FileDescriptor.close(fd) }
        _ = try valueOrErrno("fsync(\(path))") { fsync(fd) }
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
