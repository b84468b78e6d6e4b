import Foundation
import JournalStore
import Posix
import TestSupport

/// How big the hot-user section is: the full run, or `--smoke` (seconds).
struct HotUserScale {
    /// The histories of the one user, in records, and the records timed after each.
    var histories: [Int]
    var moreRecords: Int
    /// Rounds over the histories (each round times every history once, on a fresh copy of its journal).
    var rounds: Int
    /// Records sent to the daemon per connection while a history is built.
    var buildChunk: Int
    /// Realistic traffic with and without the hot user: the paced rate and how long, the clients, the share of
    /// lines rewritten, the alternating pairs of the pipelined runs.
    var pacedRate: Double
    var pacedSeconds: Double
    var clients: Int
    var percent: UInt64
    var pairs: Int

    static let full = HotUserScale(
        histories: [10, 1_000, 100_000, 1_000_000], moreRecords: 10_000, rounds: 3, buildChunk: 100_000,
        pacedRate: 2_000, pacedSeconds: 30, clients: 4, percent: 30, pairs: 5)

    static let smoke = HotUserScale(
        histories: [10, 1_000], moreRecords: 500, rounds: 1, buildChunk: 500, pacedRate: 2_000, pacedSeconds: 2,
        clients: 4, percent: 30, pairs: 1)
}

/// Section 8, issue 31: one very busy user (`HotUserStream.user`). Since schema 11 the join refreshes a user with
/// more than 16 records by bounded index lookups (`BoundedRefresh`) instead of re-attributing their whole history,
/// so a record of that user should cost about the same whatever their history holds.
///
/// 1. Histories: the user's journal history is built (pipelined into a daemon, one history after another on
///    the same journal, each kept as a copy), then each copy is restarted and `moreRecords` more records of the
///    user are pipelined over one connection; records/s and the daemon's CPU (utime + stime of its process from
///    `/proc/PID/stat`, from just before the first send to the last answer) per record. Rounds over the histories,
///    medians.
/// 2. Realistic traffic (`WorkloadSimulator`) paced over 4 connections, as it is and with a share of its lines
///    naming the hot user: acknowledgement latency; then the same two files pipelined (alternating pairs).
final class HotUserSection {
    static let section = "8 Hot users"

    /// What the targets are judged on.
    struct Result {
        /// CPU µs a record after the largest history, and after the smallest.
        var largest: (history: Int, cpuMicroseconds: Double)?
        var smallest: (history: Int, cpuMicroseconds: Double)?
        var pacedPlain: LatencyResult?
        var pacedHot: LatencyResult?
        var pipelined: PairedRuns?

        /// Largest history's CPU a record over the smallest's.
        var cpuRatio: Double? {
            guard let largest, let smallest, largest.cpuMicroseconds > 0, smallest.cpuMicroseconds > 0 else {
                return nil
            }
            return largest.cpuMicroseconds / smallest.cpuMicroseconds
        }

        var p99Ratio: Double? {
            guard let pacedPlain, let pacedHot else { return nil }
            return pacedHot.p99Milliseconds / max(0.001, pacedPlain.p99Milliseconds)
        }
    }

    private let context: SectionContext
    private let scale: HotUserScale
    private(set) var result = Result()

    init(context: SectionContext, scale: HotUserScale) {
        self.context = context
        self.scale = scale
    }

    func run() throws -> Result {
        try measureHistories()
        FileSystem.syncAll()
        try measureTraffic()
        return result
    }

    // MARK: 1. Histories

    /// One timed run: records/s and the daemon's CPU µs a record.
    private struct Timed {
        let rate: Double
        let cpuMicroseconds: Double
    }

    private func measureHistories() throws {
        let user = HotUserStream.user
        let sizes = Set(scale.histories).sorted()
        var stream = HotUserStream()
        let building = context.newDatabase()
        var templates: [Int: String] = [:]
        var more: [Int: [Submission]] = [:]
        var buildSeconds = 0.0
        for size in sizes {
            context.progress("hot users: building a history of \(Format.grouped(Double(size))) records of \(user)")
            let daemon = try context.startDaemon("hot-build", building)
            while stream.produced < size {
                let chunk = try stream.take(min(scale.buildChunk, size - stream.produced))
                let sent = try Self.pipeline(chunk, to: daemon)
                buildSeconds += Double(sent.end - sent.start) / 1e9
            }
            try daemon.stop()
            let template = context.newDatabase()
            try SectionContext.copyJournal(building, to: template)
            templates[size] = template
            // The records timed after this history: the ones that follow it (a copy of the generator runs on).
            var lookahead = stream
            more[size] = try lookahead.take(scale.moreRecords)
        }
        context.scratch.removeDatabase(building)
        let built = stream.produced
        var runs: [Int: [Timed]] = [:]
        for round in 1...max(1, scale.rounds) {
            for size in sizes {
                guard let template = templates[size], let records = more[size] else { continue }
                context.progress(
                    "hot users: round \(round), \(Format.grouped(Double(records.count))) more records after a "
                        + "history of \(Format.grouped(Double(size)))")
                let path = context.newDatabase()
                try SectionContext.copyJournal(template, to: path)
                FileSystem.syncAll()
                let daemon = try context.startDaemon("hot-\(size)", path)
                // Learning the journaled users after the start is not this measurement's work.
                _ = try daemon.waitForLog(containing: "the join knows every journaled user", timeoutSeconds: 600)
                guard let before = ProcessCPU.seconds(pid: daemon.pid) else {
                    throw BenchFailure("cannot read the daemon's CPU time")
                }
                let sent = try Self.pipeline(records, to: daemon)
                guard let after = ProcessCPU.seconds(pid: daemon.pid) else {
                    throw BenchFailure("cannot read the daemon's CPU time")
                }
                try daemon.stop()
                context.scratch.removeDatabase(path)
                runs[size, default: []].append(
                    Timed(
                        rate: Double(records.count) / (Double(sent.end - sent.start) / 1e9),
                        cpuMicroseconds: (after - before) * 1e6 / Double(records.count)))
            }
        }
        for template in templates.values { context.scratch.removeDatabase(template) }
        let median = { (values: [Double]) in PairedRuns.median(values) }
        for size in sizes {
            guard let timed = runs[size] else { continue }
            let cpu = median(timed.map(\.cpuMicroseconds))
            if size == sizes.first { result.smallest = (size, cpu) }
            if size == sizes.last { result.largest = (size, cpu) }
            context.add(
                ResultRow(
                    section: Self.section,
                    name: "one user (`\(user)`) with a history of \(Format.grouped(Double(size))) records: "
                        + "\(Format.grouped(Double(scale.moreRecords))) more of theirs pipelined, 1 connection",
                    value: "\(Format.grouped(median(timed.map(\.rate)))) records/s, "
                        + (cpu > 0
                            ? "\(Format.fixed(cpu, 1)) µs daemon CPU a record"
                            : "daemon CPU under one 10 ms tick (< "
                                + "\(Format.fixed(1e4 / Double(scale.moreRecords), 1)) µs a record)"),
                    comparison: "medians of \(timed.count) (records/s "
                        + timed.map { Format.grouped($0.rate) }.joined(separator: ", ") + "; µs "
                        + timed.map { Format.fixed($0.cpuMicroseconds, 1) }.joined(separator: ", ")
                        + "); utime + stime from /proc/PID/stat, 10 ms ticks"))
        }
        if let largest = result.largest, let smallest = result.smallest, largest.history != smallest.history {
            let rates = { (size: Int) in runs[size].map { median($0.map(\.rate)) } ?? 0 }
            context.add(
                ResultRow(
                    section: Self.section,
                    name: "daemon CPU a record, history of \(Format.grouped(Double(largest.history))) against "
                        + "\(Format.grouped(Double(smallest.history))) records",
                    value: result.cpuRatio.map(Format.ratio) ?? "– (under one clock tick)",
                    comparison: "target ≤ 2× (1,000,000 against 10); records/s "
                        + Format.ratio(rates(largest.history) / max(1, rates(smallest.history)))
                        + "; the histories were built through the daemon at "
                        + "\(Format.grouped(Double(built) / max(buildSeconds, 1e-9))) records/s "
                        + "(\(Format.grouped(Double(built))) records of one user, one connection at a time)"))
        }
    }

    /// Pipelines `records` over one connection (framed before the clock starts); returns when the first record
    /// was about to be sent and when the last answer came (`Stopwatch.now()`). A failure quotes the daemon's stderr.
    private static func pipeline(
        _ records: [Submission], to daemon: DaemonProcess
    ) throws -> (start: UInt64, end: UInt64) {
        do {
            let client = try PipelinedClient(socketPath: daemon.socketPath, records: records[...])
            let start = Stopwatch.now()
            for worker in client.start() { worker.join() }
            try client.check()
            return (start, client.finishedAt)
        } catch {
            let state = daemon.process.isRunning ? "running" : "exited \(daemon.process.terminationStatus)"
            throw BenchFailure("\(error); offertrackd (\(state)) wrote:\n\(daemon.log)")
        }
    }

    // MARK: 2. Realistic traffic with a hot user in it

    private func measureTraffic() throws {
        let count = Int(scale.pacedRate * scale.pacedSeconds)
        let plain = Workload(count: count)
        let (hotSubmissions, rewritten) = try HotUserStream.rewriting(plain.submissions, percent: scale.percent)
        let hot = Workload(submissions: hotSubmissions)
        let share = Format.fixed(Double(rewritten) * 100 / Double(max(1, hot.count)), 1)
        let clients = scale.clients
        let load = Format.grouped(scale.pacedRate)
        var paced: [Bool: LatencyResult] = [:]
        for isHot in [false, true] {
            context.progress(
                "hot users: \(load) records/s paced over \(clients) connections, "
                    + (isHot ? "\(share) % of the lines naming \(HotUserStream.user)" : "the traffic as it is"))
            FileSystem.syncAll()
            let daemon = try context.startDaemon("hot-paced", context.newDatabase())
            paced[isHot] = try AckLatency.measure(
                (isHot ? hot : plain).submissions[...], recordsPerSecond: scale.pacedRate, clients: clients,
                socketPath: daemon.socketPath)
            try daemon.stop()
        }
        result.pacedPlain = paced[false]
        result.pacedHot = paced[true]
        context.progress("hot users: the same two files pipelined over \(clients) connections, alternating")
        let pipelined = try PairedRuns.measure(pairs: scale.pairs) {
            try self.pipelinedRate(hot, clients: clients)
        } without: {
            try self.pipelinedRate(plain, clients: clients)
        }
        result.pipelined = pipelined
        let traffic =
            "`WorkloadSimulator` traffic (\(Format.grouped(Double(count))) records) at \(load) records/s, "
            + "\(clients) connections"
        for isHot in [false, true] {
            guard let latency = paced[isHot] else { continue }
            context.add(
                ResultRow(
                    section: Self.section,
                    name: "ack latency p50 / p99 / max, " + traffic
                        + (isHot ? ", \(share) % of the lines naming `\(HotUserStream.user)`" : ", as it is"),
                    value:
                        "\(Format.fixed(latency.p50Milliseconds, 2)) / \(Format.fixed(latency.p99Milliseconds, 2)) / "
                        + "\(Format.fixed(latency.maxMilliseconds, 2)) ms",
                    comparison: "achieved \(Format.grouped(latency.achievedPerSecond))/s"
                        + (isHot
                            ? result.p99Ratio.map { "; p99 \(Format.ratio($0)) the traffic as it is; target ≤ 2×" }
                                ?? ""
                            : "")))
        }
        context.add(
            ResultRow(
                section: Self.section,
                name: "durable ingest of the same records pipelined, \(clients) connections, as they are",
                value: "\(Format.grouped(pipelined.medianWithout)) records/s",
                comparison: "median of \(pipelined.without.count): "
                    + pipelined.without.map(Format.grouped).joined(separator: ", ")))
        context.add(
            ResultRow(
                section: Self.section,
                name: "durable ingest of the same records pipelined, \(clients) connections, \(share) % naming "
                    + "`\(HotUserStream.user)`",
                value: "\(Format.grouped(pipelined.medianWith)) records/s",
                comparison: "\(Format.ratio(pipelined.medianRatio)) the records as they are (median of "
                    + "\(pipelined.ratios.count) alternating pairs: \(pipelined.ratiosDescription)); target ≥ 0.8×"))
    }

    private func pipelinedRate(_ workload: Workload, clients: Int) throws -> Double {
        FileSystem.syncAll()
        let daemon = try context.startDaemon("hot-pipelined", context.newDatabase())
        defer { try? daemon.stop() }
        return try IngestThroughput.measure(workload, clients: clients, socketPath: daemon.socketPath)
    }
}
