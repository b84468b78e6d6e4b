import Posix

/// A client connection to offertrackd that sends lines and reads their answers in order.
struct DaemonConnection {
    private var fd: Int32?
    private var reader: LineReader?

    var isOpen: Bool { fd != nil }

    /// Connects to the daemon's socket.
    static func open(_ path: String, retryForSeconds: Int) throws(CLIError) -> DaemonConnection {
        do {
            let fd = try UnixSocket.connect(path: path)
            UnixSocket.setReceiveTimeout(fd, seconds: 120)
            var connection = DaemonConnection()
            connection.fd = fd
            connection.reader = LineReader(fd: fd)
            return connection
        } catch {
            throw CLIError(.unavailable, "cannot reach offertrackd at \(path): \(error)")
        }
    }

    /// Sends every line and returns the answers received, in order (fewer if the connection drops).
    func exchange(_ lines: [[UInt8]]) throws(PosixError) -> [DaemonResponse] {
        guard let fd, let reader else { throw PosixError("send", errno: 107) }  // ENOTCONN
        var payload: [UInt8] = []
        payload.reserveCapacity(lines.reduce(0) { $0 + $1.count + 1 })
        for line in lines {
            payload.append(contentsOf: line)
            payload.append(UInt8(ascii: "\n"))
        }
        try FileDescriptor.writeAll(fd, payload)
        var answers: [DaemonResponse] = []
        answers.reserveCapacity(lines.count)
        while answers.count < lines.count {
            guard let line = try? reader.nextLine(), let answer = DaemonResponse(line: line) else { break }
            answers.append(answer)
        }
        return answers
    }

    mutating func close() {
        if let fd { FileDescriptor.close(fd) }
        fd = nil
        reader = nil
    }
}
