import Glibc

/// Thin wrappers over the fd system calls the daemon and CLI use; EINTR is retried, errors thrown with errno.
public enum FileDescriptor {
    /// Reads up to `buffer.count` bytes.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(PosixError) -> IOResult {
        do {
            let n = try valueOrErrno("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
            return .transferred(n)
        } catch  where error.isWouldBlock {
            return .wouldBlock
        }
    }

    /// Writes up to `buffer.count` bytes (never raises SIGPIPE: uses `send` with `MSG_NOSIGNAL` on sockets).
    public static func write(_ fd: Int32, from buffer: UnsafeRawBufferPointer) throws(PosixError) -> IOResult {
        do {
            let n = try valueOrErrno("send") {
                Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
            }
            return .transferred(n)
        } catch  where error.isWouldBlock {
            return .wouldBlock
        } catch  where error.errno == ENOTSOCK {
            let n = try valueOrErrno("write") { Glibc.write(fd, buffer.baseAddress, buffer.count) }
            return .transferred(n)
        }
    }

    /// Writes all of `bytes`, blocking as needed (stdout, files, blocking sockets; never raises SIGPIPE).
    public static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>) throws(PosixError) {
        let array = Array(bytes)
        var offset = 0
        while offset < array.count {
            let result = array.withUnsafeBytes { raw in
                Result { () throws(PosixError) in try write(fd, from: UnsafeRawBufferPointer(rebasing: raw[offset...]))
                }
            }
            switch result {
            case .success(.transferred(let count)): offset += count
            case .success(.wouldBlock): throw PosixError("write", errno: EAGAIN)
            case .failure(let error): throw error
            }
        }
    }

    /// Closes `fd`, ignoring errors (the descriptor is gone either way on Linux).
    public static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Sets `O_NONBLOCK` on `fd`.
    public static func setNonBlocking(_ fd: Int32) throws(PosixError) {
        let flags = try valueOrErrno("fcntl") { fcntl(fd, F_GETFL) }
        _ = try valueOrErrno("fcntl") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    /// Writes a diagnostic line to stderr (C's `stderr` global is not usable from Swift 6).
    public static func printError(_ line: String) {
        var text = line
        if !text.hasSuffix("\n") { text += "\n" }
        try? writeAll(2, Array(text.utf8))
    }

    /// Whether `fd` is a terminal.
    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }
}
