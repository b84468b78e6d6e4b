import Foundation
import JSON
import OfferTrackDomain
import Posix
import WireFormat

/// A client of the daemon's socket: sends lines, reads answers.
final class LineClient {
    let fd: Int32
    private let reader: LineReader

    init(path: String, receiveTimeoutSeconds: Int = 30) throws {
        fd = try UnixSocket.connect(path: path)
        UnixSocket.setReceiveTimeout(fd, seconds: receiveTimeoutSeconds)
        reader = LineReader(fd: fd)
    }

    /// Connects to a socket whose path appears before anyone listens on it (`systemd-socket-activate` binds, then
    /// listens: a connect in between is refused, and the path may not exist yet), retrying for `seconds`.
    static func connectWhenListening(path: String, seconds: Double = 10) throws -> LineClient {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            do { return try LineClient(path: path) } catch  where Date() < deadline { usleep(10_000) }
        }
    }

    deinit { FileDescriptor.close(fd) }

    func send(_ text: String) throws { try FileDescriptor.writeAll(fd, Array(text.utf8)) }

    func send(lines: [String]) throws { try send(lines.map { $0 + "\n" }.joined()) }

    /// Ends the sending direction (the daemon still answers).
    func finishSending() { UnixSocket.shutdownWrite(fd) }

    /// What the next read found.
    enum Next: Equatable {
        case line(String)
        /// The daemon closed the connection.
        case endOfStream
        /// Nothing came within the receive timeout: the connection is still open (a hung daemon looks like this).
        case timedOut
        /// The read failed otherwise (e.g. the connection was reset).
        case failed(Int32)
    }

    /// The next line, end of stream and a timeout told apart.
    func next() -> Next {
        do {
            guard let line = try reader.nextLine() else { return .endOfStream }
            return .line(String(decoding: line, as: UTF8.self))
        } catch {
            return error.errno == EAGAIN || error.errno == EWOULDBLOCK ? .timedOut : .failed(error.errno)
        }
    }

    /// The next answer line as text, or nil at end of stream / timeout (see `next()` to tell them apart).
    func readLine() -> String? {
        guard case .line(let line) = next() else { return nil }
        return line
    }

    /// The next answer, decoded; nil at end of stream.
    func readAnswer() -> Answer? { readLine().flatMap(Answer.init) }

    /// Reads `count` answers (fewer if the stream ends).
    func readAnswers(_ count: Int) -> [Answer] {
        var answers: [Answer] = []
        while answers.count < count, let answer = readAnswer() { answers.append(answer) }
        return answers
    }

    /// Sends `lines` and reads one answer per line, writing from another thread so neither side blocks.
    func exchange(_ lines: [String]) -> [Answer] {
        let payload = Array(lines.map { $0 + "\n" }.joined().utf8)
        let fd = self.fd
        let writer = Thread { try? FileDescriptor.writeAll(fd, payload) }
        writer.start()
        return readAnswers(lines.count)
    }
}

/// One decoded response line.
struct Answer: Equatable, CustomStringConvertible {
    let raw: String
    let id: String?
    let status: String
    let seq: Int64?
    let code: String?
    let field: String?

    init?(_ line: String) {
        guard case .object(let object)? = try? JSONParser.parse(Array(line.utf8)),
            case .string(let status)? = object["status"]
        else { return nil }
        raw = line
        self.status = status
        if case .string(let id)? = object["id"] { self.id = id } else { id = nil }
        if case .number(let number)? = object["seq"] { seq = number.int64Value } else { seq = nil }
        if case .object(let error)? = object["error"] {
            if case .string(let code)? = error["code"] { self.code = code } else { code = nil }
            if case .string(let field)? = error["field"] { self.field = field } else { field = nil }
        } else {
            code = nil
            field = nil
        }
    }

    var description: String { raw }
}
