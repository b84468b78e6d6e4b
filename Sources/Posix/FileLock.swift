import Glibc

/// An exclusive `flock` on a lock file, held until the process exits (the descriptor is never closed).
public enum FileLock {
    /// Why the lock was not taken.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// Another process holds it.
        case held(path: String)
        case system(PosixError, path: String)

        public var description: String {
            switch self {
            case .held(let path): "\(path) is locked by another process"
            case .system(let error, let path): "\(path): \(error)"
            }
        }
    }

    /// Creates `path` if needed (mode 0600) and takes an exclusive lock on it without waiting; returns the
    /// descriptor that holds it.
    public static func acquireExclusive(path: String) throws(Failure) -> Int32 {
        let fd: Int32
        do {
            fd = try valueOrErrno("open") { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600) }
        } catch {
            throw .system(error, path: path)
        }
        do {
            _ = try valueOrErrno("flock") { flock(fd, LOCK_EX | LOCK_NB) }
        } catch {
            FileDescriptor.close(fd)
            if error.errno == EWOULDBLOCK { throw .held(path: path) }
            throw .system(error, path: path)
        }
        return fd
    }
}
