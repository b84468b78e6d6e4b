import Foundation
import Glibc
import Synchronization

/// A stand-in for systemd's notification socket: collects what a daemon sends with `sd_notify`.
///
/// A background thread reads continuously, as systemd does: the socket's queue is short (10 datagrams here)
/// and a daemon whose notifications are not read blocks in `sd_notify`.
public final class NotifyListener: Sendable {
    /// One message and when it arrived.
    struct Arrival: Sendable {
        /// `CLOCK_MONOTONIC` nanoseconds.
        let at: UInt64
        /// Seconds since the reference date (`Date`).
        let wall: Double
        let message: String
    }

    /// What the reading thread shares with the listener (the thread must not keep the listener alive).
    private final class Inbox: @unchecked Sendable {
        // @unchecked: `socket` is read only by the reading thread (and closed after it finished); the rest is
        // synchronized.
        let socket: DatagramSocket
        let received = Mutex<[Arrival]>([])
        let stopped = Atomic<Bool>(false)
        let finished = DispatchSemaphore(value: 0)

        init(socket: DatagramSocket) { self.socket = socket }
    }

    private let inbox: Inbox
    public let path: String

    /// Listens at `path`.
    public init(path: String) throws {
        let inbox = Inbox(socket: try DatagramSocket(path: path))
        self.inbox = inbox
        self.path = path
        Thread {
            while !inbox.stopped.load(ordering: .relaxed) {
                if let datagram = inbox.socket.receive(timeoutMilliseconds: 50) {
                    let arrival = Arrival(
                        at: Self.monotonicNanoseconds(), wall: Date().timeIntervalSinceReferenceDate,
                        message: String(decoding: datagram, as: UTF8.self))
                    inbox.received.withLock { $0.append(arrival) }
                }
            }
            inbox.finished.signal()
        }.start()
    }

    /// Listens at `notify.sock` in `directory`.
    public convenience init(in directory: ScratchDirectory) throws {
        try self.init(path: directory.file("notify.sock"))
    }

    deinit { stop() }

    /// Stops reading (and waits for the thread); the socket is closed. Idempotent.
    public func stop() {
        guard !inbox.stopped.exchange(true, ordering: .relaxed) else { return }
        inbox.finished.wait()
        inbox.socket.close()
    }

    /// `CLOCK_MONOTONIC` in nanoseconds, the clock `waitFor(timeoutSeconds:…)` reports arrivals in.
    public static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Every message received so far (since the last `reset`).
    public var messages: [String] { inbox.received.withLock { $0.map(\.message) } }

    /// When each message containing the line `assignment` arrived (seconds since the reference date).
    public func arrivals(of assignment: String) -> [Double] {
        inbox.received.withLock { all in
            all.filter { $0.message.split(separator: "\n").contains(Substring(assignment)) }.map(\.wall)
        }
    }

    /// When each message containing the line `assignment` arrived (`monotonicNanoseconds`).
    public func monotonicArrivals(of assignment: String) -> [UInt64] {
        inbox.received.withLock { all in
            all.filter { $0.message.split(separator: "\n").contains(Substring(assignment)) }.map(\.at)
        }
    }

    /// Waits for a message satisfying `predicate` (already received ones included); returns it or nil.
    public func waitFor(timeout: TimeInterval = 10, _ predicate: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let found = messages.first(where: predicate) { return found }
            usleep(5000)
        } while Date() < deadline
        return messages.first(where: predicate)
    }

    /// Waits for a message containing the line `assignment` (e.g. `READY=1`).
    public func waitFor(line assignment: String, timeout: TimeInterval = 10) -> String? {
        waitFor(timeout: timeout) { $0.split(separator: "\n").contains(Substring(assignment)) }
    }

    /// Waits up to `timeoutSeconds` for a message with a line satisfying `predicate`, skipping the first `skip`
    /// messages and giving up early once `alive` is false; returns its arrival (`monotonicNanoseconds`) and how
    /// many messages were seen, or nil.
    public func waitFor(
        timeoutSeconds: Double, skip: Int = 0, while alive: () -> Bool = { true }, _ predicate: (Substring) -> Bool
    ) -> (at: UInt64, seen: Int)? {
        let deadline = Self.monotonicNanoseconds() + UInt64(timeoutSeconds * 1e9)
        var checked = skip
        while Self.monotonicNanoseconds() < deadline {
            let found: (at: UInt64, seen: Int)? = inbox.received.withLock { all in
                defer { checked = all.count }
                for index in checked..<max(checked, all.count)
                where all[index].message.split(separator: "\n").contains(where: predicate) {
                    return (all[index].at, index + 1)
                }
                return nil
            }
            if let found { return found }
            guard alive() else { return nil }
            usleep(500)
        }
        return nil
    }

    /// The last line satisfying `predicate`, for error messages.
    public func last(_ predicate: (Substring) -> Bool) -> String? {
        for text in messages.reversed() {
            if let line = text.split(separator: "\n").first(where: predicate) { return String(line) }
        }
        return nil
    }

    /// Forgets the messages received so far.
    public func reset() {
        inbox.received.withLock { $0.removeAll() }
    }
}
