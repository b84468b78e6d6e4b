import Foundation
import OfferTrackDomain
import TestSupport

/// Section 2, issue 22: how long answers wait while `offertrack export` publishes a busy day. The daemon runs on
/// a journal with one busy day (`QueryCost.BusyDay`) under `QueryCost.rules`; paced clients offer records of
/// other users on a later day, and after a lead time the CLI exports the busy day once, as a whole run. The
/// answers to records sent while it ran are compared with those sent in an equally long window just before.
enum ExportStall {
    /// How the run is shaped.
    struct Plan {
        var recordsPerSecond: Double
        var clients: Int
        /// Seconds of pacing before the export starts (the baseline window lies in it).
        var leadSeconds: Double
        /// Seconds of pacing in all; what remains after the export is the margin after it.
        var totalSeconds: Double
    }

    /// Latency figures of the answers to the records sent in one window.
    struct Window {
        let samples: Int
        let p99Milliseconds: Double
        let maxMilliseconds: Double

        init(_ samples: [PacedClient.Sample], from start: UInt64, to end: UInt64) {
            let latencies = samples.filter { $0.sentAt >= start && $0.sentAt < end }.map(\.latency).sorted()
            self.samples = latencies.count
            p99Milliseconds = Percentile.of(latencies, 0.99)
            maxMilliseconds = Double(latencies.last ?? 0) / 1e6
        }

        /// "p99 / max ms (n answers)".
        var description: String {
            "p99 \(Format.fixed(p99Milliseconds, 2)) ms, max \(Format.fixed(maxMilliseconds, 2)) ms "
                + "(\(Format.grouped(Double(samples))) answers)"
        }
    }

    struct Result {
        /// Answers to records sent while the export ran, and in as long a window just before it.
        let during: Window
        let before: Window
        /// The export's wall time (spawn to exit) and the commission rows it wrote.
        let exportMilliseconds: Double
        let exportRows: Int
        let busyDayRecords: Int
        /// Seconds the pacing went on after the export ended (negative: it stopped first, the window is short).
        let marginAfterSeconds: Double
        let achievedPerSecond: Double
    }

    /// Runs the section: the daemon comes from `startDaemon` (given the journal and its arguments).
    static func measure(
        cli: String, scratch: ScratchDirectory, busyDayUsers: Int, plan: Plan,
        startDaemon: (_ databasePath: String, _ arguments: [String]) throws -> DaemonProcess
    ) throws -> Result {
        let busy = try QueryCost.BusyDay(scratch: scratch, users: busyDayUsers, name: "export-stall")
        defer { scratch.removeDatabase(busy.path) }
        // Other users (another seed) ten days after the busy day: the export's day does not change.
        let count = max(plan.clients, Int(plan.recordsPerSecond * plan.totalSeconds))
        let traffic = Workload(
            count: count, seed: 22, start: BigJournal.defaultStart + 10 * Timestamp.millisecondsPerDay)
        let daemon = try startDaemon(busy.path, ["--rules", busy.rulesPath])
        defer { try? daemon.stop() }
        // A restarted daemon learns the journal's users first; measure once it has.
        _ = try daemon.waitForLog(containing: "the join knows every journaled user: ", timeoutSeconds: 600)
        var timing = (start: UInt64(0), end: UInt64(0), milliseconds: 0.0)
        let samples = try AckLatency.samples(
            traffic.submissions[...], recordsPerSecond: plan.recordsPerSecond, clients: plan.clients,
            socketPath: daemon.socketPath
        ) { firstDue in
            Stopwatch.sleep(until: firstDue + UInt64(plan.leadSeconds * 1e9))
            timing.start = Stopwatch.now()
            timing.milliseconds = try QueryCost.milliseconds(cli: cli, busy.exportArguments, runs: 1).ms
            timing.end = Stopwatch.now()
        }
        try daemon.stop()
        let firstSent = samples.map(\.sentAt).min() ?? 0
        let lastSent = samples.map(\.sentAt).max() ?? 0
        let length = timing.end - timing.start
        // As long as the export, ending where it starts (shorter if the lead was shorter than the export).
        let beforeStart = max(firstSent, timing.start > length ? timing.start - length : 0)
        return Result(
            during: Window(samples, from: timing.start, to: timing.end + 1),
            before: Window(samples, from: beforeStart, to: timing.start),
            exportMilliseconds: timing.milliseconds, exportRows: busy.exportedRows, busyDayRecords: busy.records,
            marginAfterSeconds: (Double(lastSent) - Double(timing.end)) / 1e9,
            achievedPerSecond: lastSent > firstSent ? Double(samples.count) / (Double(lastSent - firstSent) / 1e9) : 0)
    }

    /// The section's row.
    static func row(_ result: Result, plan: Plan) -> ResultRow {
        let margin =
            result.marginAfterSeconds >= 0
            ? "pacing went on \(Format.fixed(result.marginAfterSeconds, 1)) s after it"
            : "**pacing stopped \(Format.fixed(-result.marginAfterSeconds, 1)) s before the export ended**"
        return ResultRow(
            section: "2 offertrackd",
            name: "longest answer while a busy day exports (\(Format.grouped(Double(result.exportRows))) commission "
                + "rows), \(Format.grouped(plan.recordsPerSecond)) records/s offered by \(plan.clients) clients",
            value: "\(Format.fixed(result.during.maxMilliseconds, 2)) ms",
            comparison: "records sent during the export: \(result.during.description); the same length just "
                + "before it: \(result.before.description); the export (first publication, whole CLI run, "
                + "\(Format.grouped(Double(result.busyDayRecords))) records in the day) took "
                + "\(Format.fixed(result.exportMilliseconds, 1)) ms; \(margin); achieved "
                + "\(Format.grouped(result.achievedPerSecond))/s; target ≤ 250 ms")
    }
}
