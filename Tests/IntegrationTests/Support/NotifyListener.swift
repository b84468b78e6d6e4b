import Foundation
import Posix

/// A stand-in for systemd's notification socket: collects what the daemon sends with `sd_notify`.
final class NotifyListener {
    let socket: DatagramSocket
    private(set) var messages: [String] = []

    init(in directory: ScratchDirectory) throws {
        socket = try DatagramSocket(path: directory.file("notify.sock"))
    }

    var path: String { socket.path }

    /// Waits for a message satisfying `predicate` (already received ones included); returns it or nil.
    func waitFor(timeout: TimeInterval = 10, _ predicate: (String) -> Bool) -> String? {
        if let found = messages.first(where: predicate) { return found }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let remaining = Int32(max(1, deadline.timeIntervalSinceNow * 1000))
            guard let datagram = socket.receive(timeoutMilliseconds: remaining) else { continue }
            let message = String(decoding: datagram, as: UTF8.self)
            messages.append(message)
            if predicate(message) { return message }
        }
        return nil
    }

    /// Waits for a message containing the line `assignment` (e.g. `READY=1`).
    func waitFor(line assignment: String, timeout: TimeInterval = 10) -> String? {
        waitFor(timeout: timeout) { $0.split(separator: "\n").contains(Substring(assignment)) }
    }

    /// Forgets the messages received so far.
    func reset() { messages.removeAll() }
}
