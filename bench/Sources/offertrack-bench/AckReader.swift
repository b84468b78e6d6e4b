import Glibc
import Posix

/// Reads the daemon's answer lines from a blocking socket with `memchr`, without a copy per line.
final class AckReader {
    private let fd: Int32
    private let buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0

    init(fd: Int32, capacity: Int = 1 << 18) {
        self.fd = fd
        buffer = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// Calls `body` with each of the next `count` lines (without `\n`) and its index.
    func read(_ count: Int, _ body: (UnsafeRawBufferPointer, Int) throws -> Void) throws {
        var index = 0
        while index < count {
            if let base = buffer.baseAddress, let newline = memchr(base + start, 0x0A, end - start) {
                let lineEnd = base.distance(to: newline)
                try body(UnsafeRawBufferPointer(rebasing: buffer[start..<lineEnd]), index)
                start = lineEnd + 1
                index += 1
                continue
            }
            try refill(readSoFar: index, of: count)
        }
    }

    private func refill(readSoFar: Int, of count: Int) throws {
        if start > 0 {
            let kept = end - start
            if kept > 0, let base = buffer.baseAddress { memmove(base, base + start, kept) }
            start = 0
            end = kept
        }
        guard end < buffer.count else { throw BenchFailure("an answer line is longer than \(buffer.count) bytes") }
        let free = UnsafeMutableRawBufferPointer(rebasing: buffer[end...])
        switch try FileDescriptor.read(fd, into: free) {
        case .transferred(0):
            throw BenchFailure("offertrackd closed the connection after \(readSoFar) of \(count) answers")
        case .transferred(let n): end += n
        case .wouldBlock: throw BenchFailure("no answer within the receive timeout (\(readSoFar) of \(count))")
        }
    }
}

/// Checks an answer line against the one expected for an accepted record: `{"id":"<id>","status":"accepted",…`.
enum AcceptedAnswer {
    private static let head = Array(#"{"id":""#.utf8)
    private static let tail = Array(#"","status":"accepted","seq":"#.utf8)

    /// Whether `line` accepts the record `id` (ids are plain ASCII, so their JSON form is themselves).
    static func matches(_ line: UnsafeRawBufferPointer, id: [UInt8]) -> Bool {
        guard line.count > head.count + id.count + tail.count else { return false }
        var offset = 0
        for part in [head, id, tail] {
            for byte in part {
                guard line[offset] == byte else { return false }
                offset += 1
            }
        }
        return true
    }

    private static let unavailableCode = Array(#""code":"storage_unavailable""#.utf8)

    /// Whether `line` refuses its record `storage_unavailable` (the journal could not commit: retry).
    static func isUnavailable(_ line: UnsafeRawBufferPointer) -> Bool {
        let code = unavailableCode
        guard line.count >= code.count else { return false }
        return (0...(line.count - code.count)).contains { start in
            code.indices.allSatisfy { line[start + $0] == code[$0] }
        }
    }

    /// A failure naming the record and quoting the daemon's answer.
    static func failure(_ line: UnsafeRawBufferPointer, id: [UInt8]) -> BenchFailure {
        BenchFailure(
            "record \(String(decoding: id, as: UTF8.self)) was not accepted; the daemon answered: "
                + String(decoding: line, as: UTF8.self))
    }
}

extension UnixSocket {
    /// Shuts down both directions, so a thread blocked writing to `fd` fails at once.
    static func shutdownBoth(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }
}
