import Foundation
import OfferTrackDomain
import Posix
import Simulator
import Synchronization

/// Returning-user records (`simulate --returning`) kept compactly for the long fleet runs: every line in one
/// buffer, and the ids (to check each answer and to find each record in the central journals).
struct FleetRecords: Sendable {
    let bytes: [UInt8]
    /// Where line `i` ends in `bytes` (its `\n` excluded); it starts where line `i - 1` ended plus one.
    let ends: [Int]
    let ids: [String]

    /// The first `count` records of `simulate --returning` over `count / 6` users (about six records a user).
    init(count: Int, seed: UInt64) {
        var bytes: [UInt8] = []
        var ends: [Int] = []
        var ids: [String] = []
        ends.reserveCapacity(count)
        ids.reserveCapacity(count)
        for simulated in ReturningUserSimulator(users: max(1, count / 6 + 1), seed: seed, records: count) {
            bytes += simulated.line.utf8
            ends.append(bytes.count)
            bytes.append(0x0A)
            ids.append(simulated.record.id)
        }
        self.bytes = bytes
        self.ends = ends
        self.ids = ids
    }

    var count: Int { ends.count }

    /// Line `index` with its `\n`.
    func line(_ index: Int) -> ArraySlice<UInt8> {
        bytes[(index == 0 ? 0 : ends[index - 1] + 1)...ends[index]]
    }
}

/// An offered load at a steady rate over several connections (to several daemons): record `i` goes to
/// connection `i mod C` when its moment comes, so every user's records travel over every connection and every
/// edge. One thread writes (everything due in one `write` per connection); one thread per connection reads
/// the answers, checks each is `accepted`, and stamps when it came. It runs until the records are all sent or
/// `stop()`.
final class FleetLoad: @unchecked Sendable {
    // @unchecked: `answeredAt` is written at disjoint indices by the reader threads and read after `join()`;
    // the counters are behind `state`.
    private struct State {
        var sent: [Int]
        var writerDone = false
        var stopRequested = false
        var failure: BenchFailure?
    }

    private let records: FleetRecords
    private let fds: [Int32]
    private let intervalNanoseconds: Double
    private let state: Mutex<State>
    private let wakeups: [DispatchSemaphore]
    private let answeredAt: UnsafeMutablePointer<UInt64>
    private var workers: [Worker] = []
    /// When the first record was due (`Stopwatch.now()`).
    private(set) var startedAt: UInt64 = 0

    init(records: FleetRecords, socketPaths: [String], connectionsPerSocket: Int, recordsPerSecond: Double) throws {
        self.records = records
        var fds: [Int32] = []
        for _ in 0..<connectionsPerSocket {
            for path in socketPaths {
                let fd = try UnixSocket.connect(path: path)
                UnixSocket.setReceiveTimeout(fd, seconds: 120)
                fds.append(fd)
            }
        }
        self.fds = fds
        intervalNanoseconds = 1e9 / recordsPerSecond
        state = Mutex(State(sent: Array(repeating: 0, count: fds.count)))
        wakeups = fds.map { _ in DispatchSemaphore(value: 0) }
        answeredAt = .allocate(capacity: max(1, records.count))
        answeredAt.initialize(repeating: 0, count: max(1, records.count))
    }

    deinit {
        fds.forEach { FileDescriptor.close($0) }
        answeredAt.deallocate()
    }

    /// Starts the writer and the readers; the first record is due 20 ms from now.
    func start() {
        startedAt = Stopwatch.now() + 20_000_000
        workers = [Worker(name: "bench-fleet-writer") { [self] in send() }]
        for connection in fds.indices {
            workers.append(Worker(name: "bench-fleet-reader") { [self] in receive(connection) })
        }
    }

    /// Sends nothing more (what was sent is still answered).
    func stop() { state.withLock { $0.stopRequested = true } }

    /// Waits for every thread; throws what went wrong, if anything.
    func join() throws {
        for worker in workers { worker.join() }
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }

    /// Records sent so far.
    var sentCount: Int { state.withLock { $0.sent.reduce(0, +) } }

    /// When record `index` was acknowledged (`Stopwatch.now()`), 0 if it was not sent (after `join()`).
    func answered(_ index: Int) -> UInt64 { answeredAt[index] }

    private func send() {
        let connections = fds.count
        var buffers = Array(repeating: [UInt8](), count: connections)
        var counts = Array(repeating: 0, count: connections)
        var next = 0
        defer {
            state.withLock { $0.writerDone = true }
            wakeups.forEach { $0.signal() }
        }
        let due = { (index: Int) in self.startedAt + UInt64(Double(index) * self.intervalNanoseconds) }
        while next < records.count {
            guard !state.withLock({ $0.stopRequested || $0.failure != nil }) else { return }
            Stopwatch.sleep(until: due(next))
            let now = Stopwatch.now()
            while next < records.count && due(next) <= now {
                buffers[next % connections] += records.line(next)
                counts[next % connections] += 1
                next += 1
            }
            for connection in 0..<connections where counts[connection] > 0 {
                do { try FileDescriptor.writeAll(fds[connection], buffers[connection]) } catch {
                    state.withLock { $0.failure = $0.failure ?? BenchFailure("sending to an edge failed: \(error)") }
                    return
                }
                let sent = counts[connection]
                state.withLock { $0.sent[connection] += sent }
                wakeups[connection].signal()
                buffers[connection].removeAll(keepingCapacity: true)
                counts[connection] = 0
            }
        }
    }

    private func receive(_ connection: Int) {
        let connections = fds.count
        let reader = AckReader(fd: fds[connection])
        var answered = 0
        while true {
            let (sent, done) = state.withLock { ($0.sent[connection], $0.writerDone) }
            if answered < sent {
                do {
                    try reader.read(sent - answered) { line, offset in
                        let index = connection + (answered + offset) * connections
                        answeredAt[index] = Stopwatch.now()
                        let id = Array(records.ids[index].utf8)
                        guard AcceptedAnswer.matches(line, id: id) else { throw AcceptedAnswer.failure(line, id: id) }
                    }
                } catch {
                    let failure = (error as? BenchFailure) ?? BenchFailure("reading an edge's answers failed: \(error)")
                    state.withLock { $0.failure = $0.failure ?? failure }
                    UnixSocket.shutdownBoth(fds[connection])
                    return
                }
                answered = sent
                continue
            }
            if done { return }
            wakeups[connection].wait()
        }
    }
}
