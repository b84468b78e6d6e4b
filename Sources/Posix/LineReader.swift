/// Reads `\n`-terminated lines from a blocking descriptor (a file, a pipe or a client socket).
public final class LineReader {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var head = 0
    private var ended = false
    private let chunk: UnsafeMutableRawBufferPointer

    public init(fd: Int32, chunkSize: Int = 1 << 16) {
        self.fd = fd
        chunk = .allocate(byteCount: chunkSize, alignment: 16)
    }

    deinit { chunk.deallocate() }

    /// The next line without its `\n`; the final unterminated line at end of input; nil at end.
    public func nextLine() throws(PosixError) -> [UInt8]? {
        while true {
            if let newline = buffer[head...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[head..<newline])
                head = newline + 1
                if head > 1 << 16 {
                    buffer.removeFirst(head)
                    head = 0
                }
                return line
            }
            if ended {
                guard head < buffer.count else { return nil }
                let line = Array(buffer[head...])
                buffer.removeAll()
                head = 0
                return line
            }
            switch try FileDescriptor.read(fd, into: chunk) {
            case .transferred(0): ended = true
            case .transferred(let count): buffer.append(contentsOf: chunk[0..<count])
            case .wouldBlock: throw PosixError.timedOut("read")  // the receive timeout passed
            }
        }
    }
}
