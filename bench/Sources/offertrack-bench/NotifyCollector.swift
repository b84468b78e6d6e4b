import Posix
import Synchronization

/// A stand-in for systemd's notification socket that keeps reading on its own thread, as systemd does: a
/// daemon's `sd_notify` blocks once the socket's queue (`net.unix.max_dgram_qlen`, often 10) is full.
final class NotifyCollector: Sendable {
    let path: String
    /// What the reading thread shares with the waiters.
    private final class State: Sendable {
        /// Every message with the `Stopwatch.now()` of its arrival.
        let messages = Mutex<[(at: UInt64, text: String)]>([])
        let stopped = Atomic<Bool>(false)
    }

    private let state = State()
    private let worker: Worker

    init(path: String) throws {
        let socket = try DatagramSocket(path: path)
        self.path = path
        let state = state
        nonisolated(unsafe) let unsafeSocket = socket  // used by the reading thread alone
        worker = Worker(name: "bench-notify") {
            while !state.stopped.load(ordering: .relaxed) {
                guard let datagram = unsafeSocket.receive(timeoutMilliseconds: 50) else { continue }
                let at = Stopwatch.now()
                state.messages.withLock { $0.append((at, String(decoding: datagram, as: UTF8.self))) }
            }
        }
    }

    /// Stops reading (and waits for the thread).
    func stop() {
        state.stopped.store(true, ordering: .relaxed)
        worker.join()
    }

    /// Waits up to `timeoutSeconds` for a message with a line satisfying `predicate`, skipping the first `skip`
    /// messages; returns its arrival time and how many messages were seen, or nil on timeout.
    func waitFor(
        timeoutSeconds: Double, skip: Int = 0, while alive: () -> Bool = { true }, _ predicate: (Substring) -> Bool
    ) -> (at: UInt64, seen: Int)? {
        let deadline = Stopwatch.now() + UInt64(timeoutSeconds * 1e9)
        var checked = skip
        while Stopwatch.now() < deadline {
            let found: (at: UInt64, seen: Int)? = state.messages.withLock { all in
                defer { checked = all.count }
                for index in checked..<max(checked, all.count)
                where all[index].text.split(separator: "\n").contains(where: predicate) {
                    return (all[index].at, index + 1)
                }
                return nil
            }
            if let found { return found }
            guard alive() else { return nil }
            Stopwatch.sleep(seconds: 0.0005)
        }
        return nil
    }

    /// The last line satisfying `predicate`, for error messages.
    func last(_ predicate: (Substring) -> Bool) -> String? {
        let all = state.messages.withLock { $0.map(\.text) }
        for text in all.reversed() {
            if let line = text.split(separator: "\n").first(where: predicate) { return String(line) }
        }
        return nil
    }
}
