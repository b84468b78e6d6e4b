import Foundation
import Posix
import SQLite
import Synchronization

/// A thread calling `body` every `interval` seconds until stopped.
final class FleetSampler: Sendable {
    private final class Flag: Sendable {
        let running = Mutex(true)
    }

    private let flag = Flag()
    private let worker: Worker

    init(name: String, interval: Double, _ body: @escaping @Sendable () -> Void) {
        let flag = self.flag
        worker = Worker(name: name) {
            while flag.running.withLock({ $0 }) {
                let next = Stopwatch.now() + UInt64(interval * 1e9)
                body()
                Stopwatch.sleep(until: next)
            }
        }
    }

    /// Stops the thread and waits for it.
    func stop() {
        flag.running.withLock { $0 = false }
        worker.join()
    }
}

/// Watches the central journals from outside (read-only connections, as `offertrack status` would): how many
/// records each holds, and, when asked, when each record id was first seen there (polled every few
/// milliseconds, so a record is seen at most one interval after its commit).
final class CentralWatch: @unchecked Sendable {
    // @unchecked: the connections and arrays are used by the sampler thread only, and read after `stop()`.
    private let paths: [String]
    private var connections: [Connection?]
    private var lastSeq: [Int64]
    private let recordIDs: Bool
    private(set) var seen: [(id: String, at: UInt64)] = []
    private let total = Mutex<Int64>(0)
    private var sampler: FleetSampler?

    init(paths: [String], recordIDs: Bool) {
        self.paths = paths
        connections = paths.map { _ in nil }
        lastSeq = paths.map { _ in 0 }
        self.recordIDs = recordIDs
    }

    /// Polls every `interval` seconds on a thread of its own until `stop()`.
    func start(interval: Double) {
        sampler = FleetSampler(name: "bench-central-watch", interval: interval) { [self] in poll() }
    }

    func stop() {
        sampler?.stop()
        sampler = nil
    }

    /// Records the central journals hold together (as of the last poll).
    var held: Int64 { total.withLock { $0 } }

    /// Polls once now (call when the thread is not running).
    func pollNow() -> Int64 {
        poll()
        return held
    }

    private func poll() {
        for index in paths.indices {
            if connections[index] == nil {
                connections[index] = try? Connection(path: paths[index], mode: .readOnly)
                connections[index]?.setBusyTimeout(milliseconds: 1000)
            }
            guard let connection = connections[index] else { continue }
            if recordIDs {
                guard let statement = try? connection.prepare(static: "SELECT seq, id FROM records WHERE seq > ?1")
                else { continue }
                defer { statement.reset() }
                guard (try? statement.bind(lastSeq[index], at: 1)) != nil else { continue }
                let now = Stopwatch.now()
                while (try? statement.step()) == true {
                    lastSeq[index] = max(lastSeq[index], statement.int64(0))
                    seen.append((statement.text(1) ?? "", now))
                }
            } else if let last = try? connection.scalarInt("SELECT coalesce(max(seq), 0) FROM records") {
                lastSeq[index] = last
            }
        }
        let sum = lastSeq.reduce(0, +)
        total.withLock { $0 = sum }
    }

    /// Waits until the journals hold `count` records; the moment the poll saw it, nil after `timeoutSeconds`.
    static func waitUntil(
        _ watch: CentralWatch, holds count: Int64, timeoutSeconds: Double, interval: Double = 0.005
    ) -> UInt64? {
        let deadline = Stopwatch.now() + UInt64(timeoutSeconds * 1e9)
        while Stopwatch.now() < deadline {
            if watch.held >= count { return Stopwatch.now() }
            Stopwatch.sleep(seconds: interval)
        }
        return nil
    }
}

/// Reads one daemon's metric from its `/metrics` endpoint (`--metrics-listen 127.0.0.1:PORT`).
enum MetricsProbe {
    /// The value of the sample named `name` (no labels), nil when the scrape failed or it is absent.
    static func value(_ name: String, port: UInt16) -> Double? {
        scrape(port: port)?.value(name)
    }

    /// One scrape's text, nil when it failed: values read from it are of the same moment.
    static func scrape(port: UInt16) -> Scrape? {
        LoopbackHTTP.get("/metrics", port: port).map { Scrape(text: String(decoding: $0, as: UTF8.self)) }
    }

    struct Scrape {
        let text: String

        /// The value of the sample named `name` (labels included as exposed), nil when it is absent.
        func value(_ name: String) -> Double? {
            let prefix = name + " "
            for line in text.split(separator: "\n") where line.hasPrefix(prefix) {
                return Double(line.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces))
            }
            return nil
        }
    }
}

/// An edge journal read from outside: the last `seq` journaled and the durable forwarding watermark.
final class EdgeJournalProbe {
    private let path: String
    private var connection: Connection?

    init(path: String) { self.path = path }

    private func open() throws -> Connection {
        if let connection { return connection }
        do {
            let opened = try Connection(path: path, mode: .readOnly)
            opened.setBusyTimeout(milliseconds: 1000)
            connection = opened
            return opened
        } catch {
            throw BenchFailure("cannot read the edge journal \(path): \(error)")
        }
    }

    /// The highest `seq` journaled.
    func lastSeq() throws -> Int64 {
        do { return try open().scalarInt("SELECT coalesce(max(seq), 0) FROM records") ?? 0 } catch {
            throw BenchFailure("cannot read the edge journal \(path): \(error)")
        }
    }

    /// Every record up to this `seq` was acknowledged by the stream (`meta.forward_acked_seq`, stored by the
    /// forwarder at most every 200 ms while it advances).
    func watermark() throws -> Int64 {
        do {
            let text = try open().scalarText("SELECT value FROM meta WHERE key = 'forward_acked_seq'")
            return text.flatMap { Int64($0) } ?? 0
        } catch {
            throw BenchFailure("cannot read the edge journal \(path): \(error)")
        }
    }
}

/// Summaries of sampled values.
enum Distribution {
    /// Nearest-rank percentile of `values` (sorted here).
    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }

    /// `p50 / p99 / max` with `places` decimals.
    static func summary(_ values: [Double], places: Int) -> String {
        [percentile(values, 0.5), percentile(values, 0.99), values.max() ?? 0].map { Format.fixed($0, places) }
            .joined(separator: " / ")
    }

    /// Least-squares slope of `values` against `times` (per unit of `times`).
    static func slope(_ values: [Double], over times: [Double]) -> Double {
        let count = Double(values.count)
        guard values.count >= 2 else { return 0 }
        let meanT = times.reduce(0, +) / count
        let meanV = values.reduce(0, +) / count
        var numerator = 0.0
        var denominator = 0.0
        for (t, v) in zip(times, values) {
            numerator += (t - meanT) * (v - meanV)
            denominator += (t - meanT) * (t - meanT)
        }
        return denominator > 0 ? numerator / denominator : 0
    }
}
