import OfferTrackDomain
import Posix
import Synchronization

/// Section 2: head-of-line blocking. While pipelining clients flood the daemon with the whole workload, one
/// more client sends a single record every 20 ms and times each answer: with fair batches it waits for the
/// batch committing when its line arrives and its own, not for everything the flood queued.
enum FloodProbe {
    struct Result {
        let samples: Int
        let p50Milliseconds: Double
        let p99Milliseconds: Double
        let maxMilliseconds: Double
        let unloadedP50Milliseconds: Double
        let floodPerSecond: Double
    }

    static func measure(_ workload: Workload, clients: Int, socketPath: String) throws -> Result {
        let probe = try UnixSocket.connect(path: socketPath)
        defer { FileDescriptor.close(probe) }
        UnixSocket.setReceiveTimeout(probe, seconds: 60)
        let reader = LineReader(fd: probe)
        var number = 0
        func exchange() throws -> Double {
            number += 1
            let line =
                #"{"type":"capabilities","id":"flood-probe-\#(number)","ts":"2026-11-28T10:00:00Z","user":"probe","#
                + #""authorization":"denied"}"# + "\n"
            let start = Stopwatch.now()
            try FileDescriptor.writeAll(probe, Array(line.utf8))
            guard let answer = try reader.nextLine(), answer.contains(UInt8(ascii: "s")) else {
                throw BenchFailure("the flood probe got no answer")
            }
            return Double(Stopwatch.now() - start) / 1e6
        }
        var unloaded: [Double] = []
        for _ in 0..<20 {
            unloaded.append(try exchange())
            Stopwatch.sleep(seconds: 0.005)
        }
        let connections = try workload.split(into: clients).map {
            try PipelinedClient(socketPath: socketPath, records: $0)
        }
        let start = Stopwatch.now()
        let workers = connections.flatMap { $0.start() }
        let finished = Atomic<Bool>(false)
        let done = Worker(name: "bench-flood-join") {
            for worker in workers { worker.join() }
            finished.store(true, ordering: .sequentiallyConsistent)
        }
        var latencies: [Double] = []
        Stopwatch.sleep(seconds: 0.05)
        while !finished.load(ordering: .sequentiallyConsistent) {
            latencies.append(try exchange())
            Stopwatch.sleep(seconds: 0.02)
        }
        done.join()
        for connection in connections { try connection.check() }
        let end = connections.map(\.finishedAt).max() ?? start
        latencies.sort()
        unloaded.sort()
        func percentile(_ values: [Double], _ p: Double) -> Double {
            values.isEmpty ? 0 : values[min(values.count - 1, Int(Double(values.count) * p))]
        }
        return Result(
            samples: latencies.count, p50Milliseconds: percentile(latencies, 0.5),
            p99Milliseconds: percentile(latencies, 0.99), maxMilliseconds: latencies.last ?? 0,
            unloadedP50Milliseconds: percentile(unloaded, 0.5),
            floodPerSecond: Double(workload.count) / (Double(end - start) / 1e9))
    }
}
