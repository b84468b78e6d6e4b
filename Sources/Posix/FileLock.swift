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

    /// Whether a process holds a `flock` on `path`, read from `/proc/locks` (so asking takes no lock that could
    /// keep a daemon from starting). False when the file does not exist.
    public static func isHeld(path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, let locks = FileSystem.readFile("/proc/locks") else { return false }
        let device = UInt64(info.st_dev)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        let key = String(format2: major) + ":" + String(format2: minor) + ":" + String(info.st_ino)
        return String(decoding: locks, as: UTF8.self).split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.contains("FLOCK") && fields.contains { $0 == key }
        }
    }
}

extension String {
    /// `value` in lowercase hexadecimal, at least two digits (as `/proc/locks` writes device numbers).
    fileprivate init(format2 value: UInt64) {
        let hex = String(value, radix: 16)
        self = hex.count < 2 ? "0" + hex : hex
    }
}
