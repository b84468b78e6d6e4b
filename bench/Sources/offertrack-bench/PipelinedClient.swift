import JournalStore
import OfferTrackDomain
import Posix
import TestSupport

/// One client that pipelines all its records as fast as the socket takes them: one thread writes, another
/// reads the answers and checks each is `accepted` for the right id, in order.
final class PipelinedClient: @unchecked Sendable {
    // @unchecked: `failure` and `finishedAt` are written by the worker threads and read only after `join()`.
    private let fd: Int32
    private let payload: [UInt8]
    private let ids: [[UInt8]]
    private var writeFailure: BenchFailure?
    private var readFailure: BenchFailure?
    /// When the last answer arrived (`Stopwatch.now()`).
    private(set) var finishedAt: UInt64 = 0

    /// Connects; the records are framed now so that nothing but I/O is timed.
    init(socketPath: String, records: ArraySlice<Submission>) throws {
        fd = try UnixSocket.connect(path: socketPath)
        UnixSocket.setReceiveTimeout(fd, seconds: 60)
        var payload: [UInt8] = []
        payload.reserveCapacity(records.reduce(0) { $0 + $1.line.count + 1 })
        for record in records {
            payload.append(contentsOf: record.line)
            payload.append(0x0A)
        }
        self.payload = payload
        ids = records.map { Array($0.record.id.utf8) }
    }

    deinit { FileDescriptor.close(fd) }

    var recordCount: Int { ids.count }

    /// Starts the writer and reader threads.
    func start() -> [Worker] {
        [
            Worker(name: "bench-writer") { [self] in
                do { try FileDescriptor.writeAll(fd, payload) } catch {
                    writeFailure = BenchFailure("sending to offertrackd failed: \(error)")
                }
            },
            Worker(name: "bench-reader") { [self] in
                let reader = AckReader(fd: fd)
                do {
                    try reader.read(ids.count) { line, index in
                        guard AcceptedAnswer.matches(line, id: ids[index]) else {
                            throw AcceptedAnswer.failure(line, id: ids[index])
                        }
                    }
                } catch let failure as BenchFailure {
                    readFailure = failure
                    UnixSocket.shutdownBoth(fd)  // unblocks the writer
                } catch {
                    readFailure = BenchFailure("reading answers failed: \(error)")
                    UnixSocket.shutdownBoth(fd)
                }
                finishedAt = Stopwatch.now()
            },
        ]
    }

    /// Throws what went wrong, if anything (call after joining the workers).
    func check() throws {
        if let readFailure { throw readFailure }
        if let writeFailure { throw writeFailure }
    }
}

/// Section 2: records/s of `clients` concurrent pipelining clients, every answer checked.
enum IngestThroughput {
    /// Sends all of `workload` split over `clients` connections (contiguous slices, or dealt round-robin when
    /// `interleaved`); returns records acknowledged per second.
    static func measure(
        _ workload: Workload, clients: Int, socketPath: String, interleaved: Bool = false
    ) throws -> Double {
        try measureWithCPU(workload, clients: clients, socketPath: socketPath, interleaved: interleaved).rate
    }

    /// As `measure`, and the CPU time (user + system, `/proc/PID/stat`) process `pid` (the daemon) used from just
    /// before the first send to the last answer, in µs a record (nil without `pid`, or when it cannot be read).
    static func measureWithCPU(
        _ workload: Workload, clients: Int, socketPath: String, interleaved: Bool = false, pid: Int32? = nil
    ) throws -> (rate: Double, cpuMicroseconds: Double?) {
        let slices = interleaved ? workload.interleaved(into: clients) : workload.split(into: clients)
        let connections = try slices.map {
            try PipelinedClient(socketPath: socketPath, records: $0)
        }
        let cpuBefore = pid.flatMap { ProcessCPU.seconds(pid: $0) }
        let start = Stopwatch.now()
        let workers = connections.flatMap { $0.start() }
        for worker in workers { worker.join() }
        let cpuAfter = pid.flatMap { ProcessCPU.seconds(pid: $0) }
        for connection in connections { try connection.check() }
        let end = connections.map(\.finishedAt).max() ?? start
        var cpu: Double?
        if let cpuBefore, let cpuAfter, workload.count > 0 {
            cpu = (cpuAfter - cpuBefore) * 1e6 / Double(workload.count)
        }
        return (Double(workload.count) / (Double(end - start) / 1e9), cpu)
    }
}
