import Foundation
import Posix
import Synchronization

/// A stand-in for systemd's notification socket: collects what the daemon sends with `sd_notify`.
///
/// A background thread reads continuously, as systemd does: the socket's queue is short (10 datagrams here)
/// and a daemon whose notifications are not read blocks in `sd_notify`.
final class NotifyListener {
    /// What the reading thread shares with the listener (the thread must not keep the listener alive).
    private final class Inbox: @unchecked Sendable {
        // @unchecked: `socket` is read only by the reading thread; the rest is synchronized.
        let socket: DatagramSocket
        let received = Mutex<[String]>([])
        /// When each message arrived (seconds since the reference date), in step with `received`.
        let arrivals = Mutex<[(at: Double, message: String)]>([])
        let stopped = Atomic<Bool>(false)
        let finished = DispatchSemaphore(value: 0)

        init(socket: DatagramSocket) { self.socket = socket }
    }

    private let inbox: Inbox

    init(in directory: ScratchDirectory) throws {
        let inbox = Inbox(socket: try DatagramSocket(path: directory.file("notify.sock")))
        self.inbox = inbox
        Thread {
            while !inbox.stopped.load(ordering: .relaxed) {
                if let datagram = inbox.socket.receive(timeoutMilliseconds: 50) {
                    let message = String(decoding: datagram, as: UTF8.self)
                    inbox.received.withLock { $0.append(message) }
                    let now = Date().timeIntervalSinceReferenceDate
                    inbox.arrivals.withLock { $0.append((now, message)) }
                }
            }
            inbox.finished.signal()
        }.start()
    }

    deinit {
        inbox.stopped.store(true, ordering: .relaxed)
        inbox.finished.wait()
        inbox.socket.close()
    }

    var path: String { inbox.socket.path }

    /// Every message received so far (since the last `reset`).
    var messages: [String] { inbox.received.withLock { $0 } }

    /// When each message containing the line `assignment` arrived (seconds since the reference date).
    func arrivals(of assignment: String) -> [Double] {
        inbox.arrivals.withLock { all in
            all.filter { $0.message.split(separator: "\n").contains(Substring(assignment)) }.map(\.at)
        }
    }

    /// Waits for a message satisfying `predicate` (already received ones included); returns it or nil.
    func waitFor(timeout: TimeInterval = 10, _ predicate: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let found = messages.first(where: predicate) { return found }
            usleep(5000)
        } while Date() < deadline
        return messages.first(where: predicate)
    }

    /// Waits for a message containing the line `assignment` (e.g. `READY=1`).
    func waitFor(line assignment: String, timeout: TimeInterval = 10) -> String? {
        waitFor(timeout: timeout) { $0.split(separator: "\n").contains(Substring(assignment)) }
    }

    /// Forgets the messages received so far.
    func reset() {
        inbox.received.withLock { $0.removeAll() }
        inbox.arrivals.withLock { $0.removeAll() }
    }
}
