/// A reusable buffer socket input is read or peeked into, so that its callers handle the bytes as an
/// `ArraySlice<UInt8>` and never as a pointer. One per thread that reads (it is not synchronized).
public final class ReadBuffer {
    private var storage: [UInt8]

    /// A buffer of `capacity` bytes: the most one read or peek returns.
    public init(capacity: Int) {
        storage = [UInt8](repeating: 0, count: capacity)
    }

    public var capacity: Int { storage.count }

    /// Copies up to `capacity` waiting bytes from the socket `fd` without consuming them (`MSG_PEEK`);
    /// `bytes(_:)` gives them, `discard(_:from:)` consumes them.
    public func peek(_ fd: Int32) throws(PosixError) -> IOResult {
        try withStorage { (buffer) throws(PosixError) in try UnixSocket.peek(fd, into: buffer) }
    }

    /// Reads up to `capacity` bytes from `fd`.
    public func read(_ fd: Int32) throws(PosixError) -> IOResult {
        try withStorage { (buffer) throws(PosixError) in try FileDescriptor.read(fd, into: buffer) }
    }

    /// The first `count` bytes the last read or peek put in the buffer. Do not keep the slice past the next read:
    /// keeping it makes that read copy the buffer.
    public func bytes(_ count: Int) -> ArraySlice<UInt8> { storage[0..<count] }

    /// Reads and drops `count` bytes from `fd` (the peeked bytes a caller handled); false when that fails (the
    /// peer is gone).
    public func discard(_ count: Int, from fd: Int32) -> Bool {
        var left = count
        while left > 0 {
            let wanted = min(left, storage.count)
            let result = try? withStorage { (buffer) throws(PosixError) in
                try FileDescriptor.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]))
            }
            guard case .transferred(let taken)? = result, taken > 0 else { return false }
            left -= taken
        }
        return true
    }

    private func withStorage(
        _ body: (UnsafeMutableRawBufferPointer) throws(PosixError) -> IOResult
    ) throws(PosixError) -> IOResult {
        try storage.withUnsafeMutableBytes { raw in Result { () throws(PosixError) in try body(raw) } }.get()
    }
}

extension FileDescriptor {
    /// Writes up to `bytes.count` bytes of `bytes` (as `write(_:from:)`).
    public static func write(_ fd: Int32, _ bytes: ArraySlice<UInt8>) throws(PosixError) -> IOResult {
        try bytes.withUnsafeBytes { raw in Result { () throws(PosixError) in try write(fd, from: raw) } }.get()
    }
}
