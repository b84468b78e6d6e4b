import Foundation
import OfferTrackDomain
import Posix
import SQLite
import TestSupport

/// Runs every section in order and collects the report.
final class BenchRun {
    let options: BenchOptions
    let scale: BenchScale
    let scratch: ScratchDirectory
    var report: Report
    var databaseNumber = 0

    // Figures the targets are judged on.
    var baselineRowsPerSecond = 0.0
    var ingestByClients: [Int: Double] = [:]
    var latencies: [LatencyResult] = []
    var rssUnderLoad: ProcessMemory?
    var rssIdle: ProcessMemory?
    var readyOnBigJournal: Double?
    var reportOnBigJournal: Double?
    var joinRatio = 0.0
    var daemonJoinRatio = 0.0
    var busyDayExport: (milliseconds: Double, rows: Int)?
    var exportStall: ExportStall.Result?
    /// Returning-user traffic: the plain SQLite C baselines (`id` index only, per-user text index, per-user
    /// integer index), and offertrackd's ratios to them.
    var returningBaseline: Double?
    var returningRatio: Double?
    /// The daemon's CPU a returning record (median of the runs, µs).
    var returningCPUMicroseconds: Double?
    var returningOwnIndexRatio: Double?
    /// SQLite in C with the per-user index deferred to an indexer, as a fraction of the `id`-only C baseline.
    var returningDeferredCeiling: Double?
    var returningJournalOnlyRatio: Double?
    var returningLatencies: [LatencyResult] = []
    var floodProbe: FloodProbe.Result?
    /// One very busy user (section 8, issue 31).
    var hotUsers: HotUserSection.Result?

    init(options: BenchOptions) throws {
        self.options = options
        scale = options.smoke ? .smoke : .full
        scratch = try ScratchDirectory()
        report = Report(machine: .current(), mode: options.smoke ? "smoke" : "full run")
    }

    /// Measures everything; returns the markdown report.
    func run() throws -> String {
        IdleConnections.raiseDescriptorLimit()
        progress("generating \(scale.records) simulated records")
        let workload = Workload(count: scale.records)
        report.notes.append(
            "\(Format.grouped(Double(workload.count))) unique `WorkloadSimulator` records (seed 1, repeats removed), "
                + "\(Format.fixed(workload.averageLineBytes, 0)) bytes per line on average; "
                + "durability full (WAL, `synchronous=FULL`) everywhere unless stated; databases on "
                + "`\(scratch.path)` (ext4, not tmpfs)")
        let sections: [(String, () throws -> Void)] = [
            ("baseline", { try self.measureBaseline(workload) }), ("ingest", { try self.measureIngest(workload) }),
            ("latency", { try self.measureLatency(workload) }), ("flood", { try self.measureFloodProbe(workload) }),
            ("exportstall", { try self.measureExportStall() }),
            ("returning", { try self.measureReturning() }), ("heavy", { try self.measureHotUsers() }),
            ("journalsize", { try self.measureJournalSize() }), ("growth", { try self.measureJournalGrowth() }),
            ("erasure", { try self.measureErasure() }), ("erasurebound", { try self.measureErasureBound() }),
            ("sealing", { try self.measureSealing() }),
            ("json", { try self.measureJSON(workload) }),
            ("big", { try self.measureBigJournal() }), ("queries", { try self.measureQueries() }),
            ("payouts", { try self.measurePayouts() }), ("fleet", { try self.measureFleet() }),
        ]
        for (name, measure) in sections where options.measures(name) {
            // Each section starts on a quiet disk: the previous one's dirty pages written back first, so that
            // their writeback does not land in this section's fsyncs (it doubled a p99 once).
            FileSystem.syncAll()
            try measure()
        }
        judgeTargets()
        report.sortRowsBySection()
        return report.markdown
    }

    func startDaemon(label: String, databasePath: String, arguments: [String] = []) throws -> DaemonProcess {
        try DaemonProcess(
            binary: options.resolvedDaemonPath, scratch: scratch, databasePath: databasePath, label: label,
            arguments: arguments)
    }

    /// What the sections in their own types (`HotUserSection`, `ErasureSection`, `JournalSizeSection`) use of
    /// the run.
    var sectionContext: SectionContext {
        SectionContext(
            scratch: scratch,
            launchDaemon: { label, path, arguments in
                try self.startDaemon(label: label, databasePath: path, arguments: arguments)
            },
            databasePath: { self.newDatabase() }, addRow: { self.add($0) }, showProgress: { self.progress($0) })
    }

    func newDatabase() -> String {
        databaseNumber += 1
        return scratch.file("journal-\(databaseNumber).db")
    }

    /// Adds a row to the report and shows it at once (a long run shows its numbers as it goes).
    func add(_ row: ResultRow) {
        report.rows.append(row)
        progress("  \(row.name): \(row.value) (\(row.comparison))")
    }

    func progress(_ message: String) {
        FileDescriptor.printError("offertrack-bench: \(message)")
    }
}
