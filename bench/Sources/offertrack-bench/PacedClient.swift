import JournalStore
import OfferTrackDomain
import Posix

/// One client that offers its records at a fixed rate, timestamping each send and each answer.
///
/// The writer sends every record whose scheduled moment has passed in one `write`, stamped with the time just
/// before that call; the reader stamps each answer as it is read. Latency is answer time minus send time.
final class PacedClient: @unchecked Sendable {
    // @unchecked: each array is written by one worker thread and read only after `join()`.
    private let fd: Int32
    private let lines: [[UInt8]]
    private let ids: [[UInt8]]
    private let intervalNanoseconds: UInt64
    private var sentAt: [UInt64]
    private var answeredAt: [UInt64]
    /// Answered `storage_unavailable` (counted, not a failure, when `toleratesUnavailable`).
    private var unavailable: [Bool]
    private let toleratesUnavailable: Bool
    private var failure: BenchFailure?
    private var writeFailure: BenchFailure?

    /// `toleratesUnavailable`: a `storage_unavailable` answer is counted (`Sample.unavailable`), not a failure.
    init(
        socketPath: String, records: ArraySlice<Submission>, recordsPerSecond: Double,
        toleratesUnavailable: Bool = false
    ) throws {
        fd = try UnixSocket.connect(path: socketPath)
        UnixSocket.setReceiveTimeout(fd, seconds: 60)
        lines = records.map { $0.line + [0x0A] }
        ids = records.map { Array($0.record.id.utf8) }
        intervalNanoseconds = UInt64(1e9 / recordsPerSecond)
        sentAt = Array(repeating: 0, count: records.count)
        answeredAt = Array(repeating: 0, count: records.count)
        unavailable = Array(repeating: false, count: records.count)
        self.toleratesUnavailable = toleratesUnavailable
    }

    deinit { FileDescriptor.close(fd) }

    /// Starts the writer and reader threads; the first record is due at `start`.
    func start(at start: UInt64) -> [Worker] {
        [
            Worker(name: "bench-paced-writer") { [self] in send(from: start) },
            Worker(name: "bench-paced-reader") { [self] in receive() },
        ]
    }

    private func send(from start: UInt64) {
        var buffer: [UInt8] = []
        var next = 0
        while next < lines.count {
            Stopwatch.sleep(until: start + UInt64(next) * intervalNanoseconds)
            let now = Stopwatch.now()
            buffer.removeAll(keepingCapacity: true)
            var due = next
            while due < lines.count && start + UInt64(due) * intervalNanoseconds <= now {
                buffer.append(contentsOf: lines[due])
                sentAt[due] = now
                due += 1
            }
            do { try FileDescriptor.writeAll(fd, buffer) } catch {
                writeFailure = BenchFailure("sending to offertrackd failed: \(error)")
                return
            }
            next = due
        }
    }

    private func receive() {
        let reader = AckReader(fd: fd)
        do {
            try reader.read(ids.count) { line, index in
                answeredAt[index] = Stopwatch.now()
                guard AcceptedAnswer.matches(line, id: ids[index]) else {
                    guard toleratesUnavailable, AcceptedAnswer.isUnavailable(line) else {
                        throw AcceptedAnswer.failure(line, id: ids[index])
                    }
                    unavailable[index] = true
                    return
                }
            }
        } catch let error as BenchFailure {
            failure = error
            UnixSocket.shutdownBoth(fd)  // unblocks the writer
        } catch {
            failure = BenchFailure("reading answers failed: \(error)")
            UnixSocket.shutdownBoth(fd)
        }
    }

    /// One record's send moment (a value of `Stopwatch.now()`) and its latency, in nanoseconds.
    struct Sample {
        let sentAt: UInt64
        let latency: UInt64
        /// Answered `storage_unavailable` (only when the client tolerates it).
        var unavailable = false
    }

    /// Latencies in nanoseconds of every record (call after joining the workers); throws if any failed.
    func latencies() throws -> [UInt64] { try samples().map(\.latency) }

    /// Every record's send moment and latency (call after joining the workers); throws if any failed.
    func samples() throws -> [Sample] {
        if let failure { throw failure }
        if let writeFailure { throw writeFailure }
        return answeredAt.indices.map {
            Sample(sentAt: sentAt[$0], latency: answeredAt[$0] &- sentAt[$0], unavailable: unavailable[$0])
        }
    }

    /// When the first and last records were actually sent.
    var sendSpan: (first: UInt64, last: UInt64) { (sentAt.first ?? 0, sentAt.last ?? 0) }
}

/// The latency distribution at one offered load.
struct LatencyResult {
    let offeredPerSecond: Double
    /// What the clients actually managed to send per second.
    let achievedPerSecond: Double
    let samples: Int
    let p50Milliseconds: Double
    let p99Milliseconds: Double
    let p999Milliseconds: Double
    let maxMilliseconds: Double
}

/// Section 2: acknowledgement latency at a fixed offered load.
enum AckLatency {
    /// Offers `records` at `recordsPerSecond` in total, spread over `clients` connections.
    static func measure(
        _ records: ArraySlice<Submission>, recordsPerSecond: Double, clients: Int, socketPath: String
    ) throws -> LatencyResult {
        let connections = try offer(
            records, recordsPerSecond: recordsPerSecond, clients: clients, socketPath: socketPath
        ) { _ in }
        var latencies: [UInt64] = []
        latencies.reserveCapacity(records.count)
        for connection in connections { latencies += try connection.latencies() }
        latencies.sort()
        let first = connections.map(\.sendSpan.first).min() ?? 0
        let last = connections.map(\.sendSpan.last).max() ?? 0
        let span = Double(last &- first) / 1e9
        return LatencyResult(
            offeredPerSecond: recordsPerSecond,
            achievedPerSecond: span > 0 ? Double(records.count) / span : 0,
            samples: latencies.count,
            p50Milliseconds: Percentile.of(latencies, 0.50),
            p99Milliseconds: Percentile.of(latencies, 0.99),
            p999Milliseconds: Percentile.of(latencies, 0.999),
            maxMilliseconds: Double(latencies.last ?? 0) / 1e6)
    }

    /// Offers `records` like `measure` while `meanwhile` runs on this thread (given the moment the first record
    /// is due); returns every record's send moment and latency once all are answered.
    /// `toleratesUnavailable`: `storage_unavailable` answers are counted in the samples, not failures.
    static func samples(
        _ records: ArraySlice<Submission>, recordsPerSecond: Double, clients: Int, socketPath: String,
        toleratesUnavailable: Bool = false, meanwhile: (UInt64) throws -> Void
    ) throws -> [PacedClient.Sample] {
        try offer(
            records, recordsPerSecond: recordsPerSecond, clients: clients, socketPath: socketPath,
            toleratesUnavailable: toleratesUnavailable, meanwhile: meanwhile
        ).flatMap { try $0.samples() }
    }

    /// Starts `clients` paced connections offering `records` at `recordsPerSecond` in total, runs `meanwhile`,
    /// and returns the connections once every record is sent and answered.
    private static func offer(
        _ records: ArraySlice<Submission>, recordsPerSecond: Double, clients: Int, socketPath: String,
        toleratesUnavailable: Bool = false, meanwhile: (UInt64) throws -> Void
    ) throws -> [PacedClient] {
        let slices = Workload.split(records, into: clients)
        let connections = try slices.map {
            try PacedClient(
                socketPath: socketPath, records: $0, recordsPerSecond: recordsPerSecond / Double(clients),
                toleratesUnavailable: toleratesUnavailable)
        }
        // Stagger the clients evenly over one interval so the offered load is smooth.
        let start = Stopwatch.now() + 20_000_000
        let step = UInt64(1e9 / recordsPerSecond)
        let workers = connections.enumerated().flatMap { $1.start(at: start + UInt64($0) * step) }
        var failure: (any Error)?
        do { try meanwhile(start) } catch { failure = error }
        for worker in workers { worker.join() }
        if let failure { throw failure }
        return connections
    }
}

/// Nearest-rank percentiles of sorted nanosecond samples, in milliseconds.
enum Percentile {
    static func of(_ sorted: [UInt64], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return Double(sorted[min(sorted.count - 1, max(0, rank - 1))]) / 1e6
    }
}
