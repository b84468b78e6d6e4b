import Dispatch
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
    ///
    /// Lines go out in chunks from a second thread while this one reads answers, with at most
    /// `chunksInFlight` chunks unanswered: the daemon never waits for the client, and the client's memory and
    /// the daemon's backlog stay bounded.
    func exchange(_ lines: [[UInt8]], chunkSize: Int = 1024, chunksInFlight: Int = 8) throws(PosixError)
        -> [DaemonResponse]
    {
        guard let fd, let reader else { throw PosixError.notConnected("send") }
        let chunks = stride(from: 0, to: lines.count, by: chunkSize).map { start in
            var payload: [UInt8] = []
            for line in lines[start..<min(lines.count, start + chunkSize)] {
                payload.append(contentsOf: line)
                payload.append(UInt8(ascii: "\n"))
            }
            return payload
        }
        // Created at zero and raised: libdispatch traps when a semaphore dies below its initial value.
        let permits = DispatchSemaphore(value: 0)
        for _ in 0..<chunksInFlight { permits.signal() }
        let sent = DispatchGroup()
        sent.enter()
        DispatchQueue.global().async {
            defer { sent.leave() }
            for chunk in chunks {
                permits.wait()
                guard (try? FileDescriptor.writeAll(fd, chunk)) != nil else { return }
            }
        }
        var answers: [DaemonResponse] = []
        answers.reserveCapacity(lines.count)
        while answers.count < lines.count {
            guard let line = try? reader.nextLine(), let answer = DaemonResponse(line: line) else { break }
            answers.append(answer)
            if answers.count % chunkSize == 0 { permits.signal() }
        }
        if answers.count < lines.count {
            // The connection is broken: unblock the sender (its writes fail) before returning.
            UnixSocket.shutdownWrite(fd)
            for _ in 0...chunks.count { permits.signal() }
        }
        sent.wait()
        return answers
    }

    mutating func close() {
        if let fd { FileDescriptor.close(fd) }
        fd = nil
        reader = nil
    }
}
