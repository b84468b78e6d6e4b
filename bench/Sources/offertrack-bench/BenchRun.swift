import Foundation
import Journal
import OfferTrackDomain
import Posix
import SQLite
import TestSupport

/// Runs every section in order and collects the report.
final class BenchRun {
    private let options: BenchOptions
    private let scale: BenchScale
    private let scratch: ScratchDirectory
    private var report: Report
    private var databaseNumber = 0

    // Figures the targets are judged on.
    private var baselineRowsPerSecond = 0.0
    private var ingestByClients: [Int: Double] = [:]
    private var latencies: [LatencyResult] = []
    private var rssUnderLoad: ProcessMemory?
    private var rssIdle: ProcessMemory?
    private var readyOnBigJournal: Double?
    private var reportOnBigJournal: Double?
    private var joinRatio = 0.0
    private var daemonJoinRatio = 0.0
    private var busyDayExport: (milliseconds: Double, rows: Int)?
    private var exportStall: ExportStall.Result?
    /// Returning-user traffic: the plain SQLite C baselines (`id` index only, per-user text index, per-user
    /// integer index), and offertrackd's ratios to them.
    private var returningBaseline: Double?
    private var returningRatio: Double?
    private var returningOwnIndexRatio: Double?
    /// SQLite in C with the per-user index deferred to an indexer, as a fraction of the `id`-only C baseline.
    private var returningDeferredCeiling: Double?
    private var returningJournalOnlyRatio: Double?
    private var returningLatencies: [LatencyResult] = []
    private var floodProbe: FloodProbe.Result?
    /// One very busy user (section 8, issue 31).
    private var hotUsers: HotUserSection.Result?

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
            ("erasure", { try self.measureErasure() }),
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

    // MARK: Sections

    private func measureBaseline(_ workload: Workload) throws {
        for batch in scale.baselineBatches.dropLast() {
            progress("baseline: JournalWriter.append with the join, batches of \(batch)")
            let withJoin = try JournalBaseline.writerRowsPerSecond(
                workload, batch: batch, durability: .full, path: newDatabase(), join: true)
            add(
                ResultRow(
                    section: "1 Baseline",
                    name: "`JournalWriter.append` with the join maintained, batches of \(batch), in process",
                    value: "\(Format.grouped(withJoin)) rows/s", comparison: ""))
        }
        let batch = scale.baselineBatches.last ?? 1000
        progress("baseline: JournalWriter.append with and without the join, batches of \(batch), alternating")
        let paired = try PairedRuns.measure(pairs: scale.pairs) {
            try JournalBaseline.writerRowsPerSecond(
                workload, batch: batch, durability: .full, path: newDatabase(), join: true)
        } without: {
            try JournalBaseline.writerRowsPerSecond(
                workload, batch: batch, durability: .full, path: newDatabase(), join: false)
        }
        baselineRowsPerSecond = paired.medianWithout
        joinRatio = paired.medianRatio
        add(
            ResultRow(
                section: "1 Baseline",
                name: "`JournalWriter.append` with the join maintained, batches of \(batch), in process",
                value: "\(Format.grouped(paired.medianWith)) rows/s", comparison: paired.runsDescription))
        add(
            ResultRow(
                section: "1 Baseline",
                name: "**baseline**: `JournalWriter.append`, journal only (no join), batches of \(batch), in process",
                value: "\(Format.grouped(baselineRowsPerSecond)) rows/s",
                comparison: "with the join: \(Format.ratio(joinRatio)) of this (median of \(scale.pairs) "
                    + "alternating pairs: \(paired.ratiosDescription))"))
        progress("baseline: raw INSERT, batches of \(batch)")
        let raw = try JournalBaseline.rawRowsPerSecond(workload, batch: batch, durability: .full, path: newDatabase())
        add(
            ResultRow(
                section: "1 Baseline", name: "raw `INSERT (line)` via `SQLite` wrapper, no index, batches of \(batch)",
                value: "\(Format.grouped(raw)) rows/s",
                comparison: "the schema's cost: the baseline runs at \(Format.ratio(baselineRowsPerSecond / raw)) raw"))
    }

    private func measureQueries() throws {
        let cli = options.resolvedCLIPath
        let path = newDatabase()
        progress("queries: building a \(Format.grouped(Double(scale.queryRecords)))-record journal")
        _ = try BigJournal.build(path: path, count: scale.queryRecords) { _ in }
        let rulesPath = scratch.file("holding-rules.json")
        for row in try QueryCost.reportRows(cli: cli, path: path, rulesPath: rulesPath, records: scale.queryRecords) {
            add(row)
        }
        scratch.removeDatabase(path)
        progress("queries: one busy day of \(Format.grouped(Double(scale.busyDayUsers))) users, then its export")
        let (row, milliseconds, rows) = try QueryCost.exportRow(cli: cli, scratch: scratch, users: scale.busyDayUsers)
        add(row)
        busyDayExport = (milliseconds, rows)
    }

    private func measureExportStall() throws {
        let plan = scale.exportStall
        progress(
            "exportstall: a busy day of \(Format.grouped(Double(scale.busyDayUsers))) users exported while "
                + "\(Format.grouped(plan.recordsPerSecond)) records/s are offered by \(plan.clients) clients")
        let result = try ExportStall.measure(
            cli: options.resolvedCLIPath, scratch: scratch, busyDayUsers: scale.busyDayUsers, plan: plan
        ) { path, arguments in
            try self.startDaemon(label: "exportstall", databasePath: path, arguments: arguments)
        }
        exportStall = result
        add(ExportStall.row(result, plan: plan))
    }

    private func measurePayouts() throws {
        progress("payouts: a month of \(Format.grouped(Double(scale.payoutMonthRows))) export rows, then its statement")
        add(try QueryCost.payoutsRow(cli: options.resolvedCLIPath, scratch: scratch, rows: scale.payoutMonthRows))
    }

    private func measureIngest(_ workload: Workload) throws {
        var lastDaemon: DaemonProcess?
        for clients in scale.clientCounts {
            progress("offertrackd: \(clients) pipelining clients")
            let daemon = try startDaemon(label: "ingest-\(clients)", databasePath: newDatabase())
            let rate = try IngestThroughput.measure(workload, clients: clients, socketPath: daemon.socketPath)
            ingestByClients[clients] = rate
            let memory = try daemon.memory()
            if clients == scale.clientCounts.last { rssUnderLoad = memory }
            add(
                ResultRow(
                    section: "2 offertrackd",
                    name: "durable ingest, \(clients) pipelining client\(clients == 1 ? "" : "s")",
                    value: "\(Format.grouped(rate)) records/s",
                    comparison: "\(Format.ratio(rate / baselineRowsPerSecond)) baseline; daemon VmHWM "
                        + "\(Format.fixed(memory.peakMiB, 1)) MiB"))
            if clients == scale.clientCounts.first {
                add(
                    ResultRow(
                        section: "4 Footprint", name: "process start → `READY=1`, empty journal",
                        value: "\(Format.fixed(daemon.readyMilliseconds, 1)) ms", comparison: ""))
            }
            try daemon.stop()
            lastDaemon = daemon
        }
        // The join's cost end to end: 8-client runs with and without it (`--journal-only`), alternating.
        if let clients = scale.clientCounts.first(where: { $0 >= 4 }) {
            progress("offertrackd with and without the join (--journal-only): \(clients) clients, alternating")
            let paired = try PairedRuns.measure(pairs: scale.pairs) {
                let daemon = try startDaemon(label: "join-\(clients)", databasePath: newDatabase())
                defer { try? daemon.stop() }
                return try IngestThroughput.measure(workload, clients: clients, socketPath: daemon.socketPath)
            } without: {
                let daemon = try startDaemon(
                    label: "journal-only-\(clients)", databasePath: newDatabase(), arguments: ["--journal-only"])
                defer { try? daemon.stop() }
                return try IngestThroughput.measure(workload, clients: clients, socketPath: daemon.socketPath)
            }
            daemonJoinRatio = paired.medianRatio
            add(
                ResultRow(
                    section: "2 offertrackd",
                    name: "durable ingest, \(clients) pipelining clients, `--journal-only` (no join)",
                    value: "\(Format.grouped(paired.medianWithout)) records/s",
                    comparison: "with the join (\(Format.grouped(paired.medianWith)) records/s): "
                        + "\(Format.ratio(daemonJoinRatio)) of this (median of \(scale.pairs) alternating pairs: "
                        + "\(paired.ratiosDescription))"))
        }
        guard let produced = lastDaemon else { return }
        progress("offertrackd: restart on the journal of the last run, \(scale.idleConnections) idle connections")
        let restarted = try startDaemon(label: "restart", databasePath: produced.databasePath)
        add(
            ResultRow(
                section: "4 Footprint",
                name: "process start → `READY=1`, journal of \(Format.grouped(Double(scale.records))) records",
                value: "\(Format.fixed(restarted.readyMilliseconds, 1)) ms", comparison: ""))
        add(try learnedUsersRow(restarted, records: scale.records))
        let idle = try IdleConnections.memory(with: scale.idleConnections, daemon: restarted)
        rssIdle = idle
        add(
            ResultRow(
                section: "4 Footprint", name: "daemon peak RSS (VmHWM), \(scale.idleConnections) idle connections",
                value: "\(Format.fixed(idle.peakMiB, 1)) MiB",
                comparison: "VmRSS \(Format.fixed(idle.currentMiB, 1)) MiB; target ≤ 64 MiB"))
        if let underLoad = rssUnderLoad, let clients = scale.clientCounts.last {
            add(
                ResultRow(
                    section: "4 Footprint", name: "daemon peak RSS (VmHWM), \(clients) pipelining clients",
                    value: "\(Format.fixed(underLoad.peakMiB, 1)) MiB", comparison: "target ≤ 128 MiB"))
        }
        try restarted.stop()
    }

    private func measureLatency(_ workload: Workload) throws {
        let daemon = try startDaemon(label: "latency", databasePath: newDatabase())
        var offset = 0
        for (load, count) in zip(scale.latencyLoads, scale.latencyRecords) {
            let end = min(offset + count, workload.count)
            progress("latency: \(Format.grouped(load)) records/s offered by \(scale.latencyClients) clients")
            let result = try AckLatency.measure(
                workload.submissions[offset..<end], recordsPerSecond: load, clients: scale.latencyClients,
                socketPath: daemon.socketPath)
            offset = end
            latencies.append(result)
            add(
                ResultRow(
                    section: "2 offertrackd",
                    name: "ack latency p50 / p99 / p999 at \(Format.grouped(load)) records/s, "
                        + "\(scale.latencyClients) clients",
                    value: "\(Format.fixed(result.p50Milliseconds, 2)) / \(Format.fixed(result.p99Milliseconds, 2)) / "
                        + "\(Format.fixed(result.p999Milliseconds, 2)) ms",
                    comparison: "\(Format.grouped(Double(result.samples))) samples, achieved "
                        + "\(Format.grouped(result.achievedPerSecond))/s, max \(Format.fixed(result.maxMilliseconds, 2)) ms"
                ))
        }
        try daemon.stop()
        try measureScrapeCost(workload, offset: offset)
    }

    private func measureReturning() throws {
        let workload = Workload(returningUsers: scale.returningUsers, records: scale.returningRecords)
        let users = Set(workload.submissions.map(\.record.user)).count
        report.notes.append(
            "Returning-user workload (section 6): `simulate --returning`, \(Format.grouped(Double(workload.count))) "
                + "records of \(Format.grouped(Double(users))) users in time order, dealt round-robin to the clients, "
                + "\(Format.fixed(workload.averageLineBytes, 0)) bytes per line")
        let file = scratch.file("returning.ndjson")
        try Returning.write(workload.ndjson, to: file)
        let clients = 8
        // The three C baselines: only the `id` index, plus the per-user index on text (schema 5's), plus the
        // per-user index on integer keys. A fourth for throughput only: the integer index written apart from the
        // commits by an indexer (what any design keeping a per-user index in the journal's file could reach).
        let indexes = [
            ("id", "`id` unique only"), ("text", "plus `records(user, ts, id)` on text"),
            ("integer", "plus `users(user → k)` and `by_user(k, ts, seq)` WITHOUT ROWID"),
        ]
        let deferredIndex = (
            "deferred",
            "plus the integer per-user index written apart from the commits (an indexer reading back every 16,384 "
                + "rows in a transaction of its own; no join)"
        )
        var baselines: [String: [Double]] = [:]
        var defaults: [Double] = []
        var journalOnly: [Double] = []
        progress("returning users: C baselines, offertrackd and --journal-only, alternating, \(scale.pairs) rounds")
        for _ in 0..<max(1, min(3, scale.pairs)) {
            if let peers = options.peersPath {
                for (index, _) in indexes + [deferredIndex] {
                    FileSystem.syncAll()
                    baselines[index, default: []].append(
                        try Returning.rate("\(peers)/sqlite-baseline", [file, newDatabase(), "1000", index]))
                }
            }
            FileSystem.syncAll()
            let daemon = try startDaemon(label: "returning", databasePath: newDatabase())
            defaults.append(
                try IngestThroughput.measure(
                    workload, clients: clients, socketPath: daemon.socketPath, interleaved: true))
            try daemon.stop()
            FileSystem.syncAll()
            let only = try startDaemon(
                label: "returning-journal-only", databasePath: newDatabase(), arguments: ["--journal-only"])
            journalOnly.append(
                try IngestThroughput.measure(workload, clients: clients, socketPath: only.socketPath, interleaved: true)
            )
            try only.stop()
        }
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        let baseline = baselines["id"].map(median)
        returningBaseline = baseline
        returningRatio = baseline.map { median(defaults) / $0 }
        returningJournalOnlyRatio = baseline.map { median(journalOnly) / $0 }
        // The journal's schema (8) keys its per-user index on integers: that baseline is its own limit.
        returningOwnIndexRatio = baselines["integer"].map { median(defaults) / median($0) }
        if let deferred = baselines["deferred"], let baseline { returningDeferredCeiling = median(deferred) / baseline }
        for (index, description) in indexes + [deferredIndex] {
            guard let runs = baselines[index] else { continue }
            add(
                ResultRow(
                    section: "6 Returning users",
                    name: (index == "id" ? "**baseline**: " : "baseline: ")
                        + "plain SQLite in C, same records, \(description), WAL, FULL, 1,000 rows a transaction",
                    value: "\(Format.grouped(median(runs))) rows/s",
                    comparison: "median of \(runs.count): \(runs.map { Format.grouped($0) }.joined(separator: ", "))"
                        + "; offertrackd \(Format.ratio(median(defaults) / median(runs))) of this"))
        }
        add(
            ResultRow(
                section: "6 Returning users", name: "offertrackd durable ingest, \(clients) pipelining clients",
                value: "\(Format.grouped(median(defaults))) records/s",
                comparison: (returningRatio.map { "\(Format.ratio($0)) of the `id`-only C baseline; " } ?? "")
                    + "runs \(defaults.map { Format.grouped($0) }.joined(separator: ", ")); target ≥ 0.35×, "
                    + "≥ 0.8× of the schema's own per-user index"))
        add(
            ResultRow(
                section: "6 Returning users", name: "offertrackd `--journal-only`, \(clients) pipelining clients",
                value: "\(Format.grouped(median(journalOnly))) records/s",
                comparison: (returningJournalOnlyRatio.map { "\(Format.ratio($0)) of the `id`-only C baseline; " } ?? "")
                    + "runs \(journalOnly.map { Format.grouped($0) }.joined(separator: ", "))"))
        // Latency at 10,000 records/s offered over 8 connections, run after run on fresh journals.
        let load = 10_000.0
        let perRun = min(workload.count, max(clients, Int(load * (options.smoke ? 0.05 : 3))))
        progress("returning users: ack latency at 10,000 records/s, \(scale.returningLatencyRuns) runs")
        returningLatencies = []
        for _ in 0..<scale.returningLatencyRuns {
            FileSystem.syncAll()
            let daemon = try startDaemon(label: "returning-latency", databasePath: newDatabase())
            returningLatencies.append(
                try AckLatency.measure(
                    workload.submissions[0..<perRun], recordsPerSecond: load, clients: clients,
                    socketPath: daemon.socketPath))
            try daemon.stop()
        }
        // SQLite's own latency floor for each schema at the same load: the same records committed in C by a
        // group-committing loop, runs alternating over the indexes.
        // The last, the integer index with no checkpoint at all: the commits' own floor.
        typealias FloorKind = (key: String, index: String, description: String, checkpoints: Bool)
        let floorKinds: [FloorKind] =
            indexes.map { ($0.0, $0.0, $0.1, true) }
            + indexes.filter { $0.0 == "integer" }.map { ("integer-none", $0.0, $0.1, false) }
        var floors: [String: [LatencyResult]] = [:]
        if let peers = options.peersPath {
            let pacedFile = scratch.file("returning-paced.ndjson")
            try Returning.write(Workload.ndjson(workload.submissions[0..<perRun]), to: pacedFile)
            for _ in 0..<max(1, min(3, scale.returningLatencyRuns)) {
                for kind in floorKinds {
                    FileSystem.syncAll()
                    floors[kind.key, default: []].append(
                        try Returning.pacedLatency(
                            "\(peers)/sqlite-baseline", file: pacedFile, database: newDatabase(), index: kind.index,
                            recordsPerSecond: load, records: perRun, checkpoints: kind.checkpoints))
                }
            }
        }
        for kind in floorKinds {
            guard let runs = floors[kind.key] else { continue }
            add(
                ResultRow(
                    section: "6 Returning users",
                    name: "floor: SQLite in C, \(kind.description), committing what is due at 10,000 records/s"
                        + (kind.checkpoints ? " (its autocheckpoint in the loop)" : ", no checkpoint at all"),
                    value: Self.latencyFigures(runs, median),
                    comparison: "medians of \(runs.count) runs (p50 / p99 / p999 / max); p99 runs "
                        + runs.map { Format.fixed($0.p99Milliseconds, 2) }.joined(separator: ", ") + " ms"))
        }
        let ownFloorP99 = floors["integer"].map { median($0.map(\.p99Milliseconds)) }
        add(
            ResultRow(
                section: "6 Returning users",
                name: "ack latency p50 / p99 / p999 / max at 10,000 records/s, \(clients) clients",
                value: Self.latencyFigures(returningLatencies, median),
                comparison: "medians of \(returningLatencies.count) runs; worst run (by p999) "
                    + Self.latencyFigures(
                        Array(returningLatencies.sorted { $0.p999Milliseconds < $1.p999Milliseconds }.suffix(1)), median
                    )
                    + "; p99 runs "
                    + returningLatencies.map { Format.fixed($0.p99Milliseconds, 2) }.joined(separator: ", ")
                    + " ms; targets p99 5 ms, p999 15 ms"
                    + (ownFloorP99.map {
                        "; median p99 \(Format.ratio(median(returningLatencies.map(\.p99Milliseconds)) / $0)) "
                            + "the integer-index C floor's"
                    } ?? "")))
        // The peer a user would build: each record committed to PostgreSQL as it arrives.
        if let peers = options.peersPath, FileManager.default.isExecutableFile(atPath: "\(peers)/postgres-peer") {
            let subset = Workload(returningUsers: scale.returningUsers, records: scale.peerRecords)
            let peerFile = scratch.file("peer.ndjson")
            try Returning.write(subset.ndjson, to: peerFile)
            progress("returning users: the PostgreSQL 15 peer, \(clients) clients, \(subset.count) records")
            FileSystem.syncAll()
            let peer = try Returning.rate(
                "\(peers)/run-postgres-peer", ["\(peers)/postgres-peer", peerFile, String(clients)])
            add(
                ResultRow(
                    section: "6 Returning users",
                    name: "the peer: an app server committing each record to PostgreSQL 15, \(clients) clients",
                    value: "\(Format.grouped(peer)) records/s",
                    comparison: "synchronous commit, unique index on id, \(Format.grouped(Double(subset.count))) "
                        + "records; offertrackd runs at \(Format.fixed(median(defaults) / peer, 1))× this"))
        }
    }

    /// "p50 / p99 / p999 / max ms", each the median over `runs`.
    private static func latencyFigures(_ runs: [LatencyResult], _ median: ([Double]) -> Double) -> String {
        guard !runs.isEmpty else { return "–" }
        let figures: [KeyPath<LatencyResult, Double>] = [
            \.p50Milliseconds, \.p99Milliseconds, \.p999Milliseconds, \.maxMilliseconds,
        ]
        return figures.map { figure in Format.fixed(median(runs.map { $0[keyPath: figure] }), 2) }.joined(
            separator: " / ") + " ms"
    }

    /// Acknowledgement latency at the middle load with the metrics endpoint on, without and with a scraper
    /// (alternating pairs, same daemon): what serving scrapes costs.
    private func measureScrapeCost(_ workload: Workload, offset start: Int) throws {
        let load = scale.latencyLoads[min(1, scale.latencyLoads.count - 1)]
        let count = scale.latencyRecords[min(1, scale.latencyRecords.count - 1)]
        progress("scrape cost: \(Format.grouped(load)) records/s with and without /metrics scraped every 20 ms")
        var without: [Double] = []
        var with: [Double] = []
        var scrapes = 0
        var offset = start
        for pair in 0..<3 {
            for scraped in pair % 2 == 0 ? [false, true] : [true, false] {
                // A new daemon and journal each run (the workload's records are each sent once per journal).
                if offset + count > workload.count { offset = 0 }
                let port = try freePort()
                let daemon = try startDaemon(
                    label: "scrape-\(pair)-\(scraped)", databasePath: newDatabase(),
                    arguments: ["--metrics-listen", "127.0.0.1:\(port)"])
                let scraper = scraped ? ScrapeCost.Scraper(port: port, interval: 0.02) : nil
                let result = try AckLatency.measure(
                    workload.submissions[offset..<(offset + count)], recordsPerSecond: load,
                    clients: scale.latencyClients, socketPath: daemon.socketPath)
                offset += count
                scrapes += scraper?.stop() ?? 0
                try daemon.stop()
                if scraped { with.append(result.p99Milliseconds) } else { without.append(result.p99Milliseconds) }
            }
        }
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        add(
            ResultRow(
                section: "2 offertrackd",
                name: "ack latency p99 at \(Format.grouped(load)) records/s while `/metrics` is scraped every 20 ms",
                value: "\(Format.fixed(median(with), 2)) ms",
                comparison: "\(Format.ratio(median(with) / max(0.001, median(without)))) of the same load unscraped "
                    + "(\(Format.fixed(median(without), 2)) ms; medians of 3 alternating runs, \(scrapes) scrapes)"))
    }

    /// A loopback port nobody listens on now.
    private func freePort() throws -> UInt16 {
        let fd = try TCPSocket.listen(host: "127.0.0.1", port: 0)
        defer { FileDescriptor.close(fd) }
        return try TCPSocket.port(of: fd)
    }

    private func measureFloodProbe(_ workload: Workload) throws {
        let clients = 8
        progress("flood: one record every 20 ms beside \(clients) pipelining clients")
        let daemon = try startDaemon(label: "flood", databasePath: newDatabase())
        let result = try FloodProbe.measure(workload, clients: clients, socketPath: daemon.socketPath)
        try daemon.stop()
        floodProbe = result
        add(
            ResultRow(
                section: "2 offertrackd",
                name: "a single record's latency p50 / p99 / max beside \(clients) pipelining clients",
                value: "\(Format.fixed(result.p50Milliseconds, 2)) / \(Format.fixed(result.p99Milliseconds, 2)) / "
                    + "\(Format.fixed(result.maxMilliseconds, 2)) ms",
                comparison:
                    "\(result.samples) samples; unloaded p50 \(Format.fixed(result.unloadedP50Milliseconds, 2)) ms; "
                    + "the flood ran at \(Format.grouped(result.floodPerSecond)) records/s"))
    }

    /// Section 8: one very busy user (`HotUserSection`).
    private func measureHotUsers() throws {
        var hotScale = scale.hot
        if let histories = options.hotHistories { hotScale.histories = histories }
        hotUsers = try HotUserSection(
            scratch: scratch, scale: hotScale,
            startDaemon: { label, path in try self.startDaemon(label: label, databasePath: path) },
            newDatabase: { self.newDatabase() }, add: { self.add($0) }, progress: { self.progress($0) }
        ).run()
    }

    /// Section 9: forgetting a person (`ErasureSection`).
    private func measureErasure() throws {
        try ErasureSection(
            scratch: scratch, scale: options.smoke ? .smoke : .full,
            startDaemon: { label, path, arguments in
                try self.startDaemon(label: label, databasePath: path, arguments: arguments)
            },
            newDatabase: { self.newDatabase() }, add: { self.add($0) }, progress: { self.progress($0) }
        ).run()
    }

    /// Section 7: the fleet over a real three-node JetStream cluster (`FleetSection`).
    private func measureFleet() throws {
        var fleetScale = options.smoke ? FleetScale.smoke : FleetScale.full
        if let seconds = options.fleetOutageSeconds { fleetScale.outageSeconds = seconds }
        if let records = options.fleetRecords {
            fleetScale.throughputRecords = records
            fleetScale.throughputUsers = max(1, records / 6)
        }
        if let rounds = options.fleetRounds { fleetScale.pairs = rounds }
        if let rate = options.fleetLagRate { fleetScale.lagRate = rate }
        if let seconds = options.fleetLagSeconds { fleetScale.lagSeconds = seconds }
        try FleetSection(
            daemonPath: options.resolvedDaemonPath, cliPath: options.resolvedCLIPath, scratch: scratch,
            scale: fleetScale,
            newDatabase: { self.newDatabase() }, add: { self.add($0) }, progress: { self.progress($0) }
        ).run(parts: options.fleetParts)
    }

    private func measureJSON(_ workload: Workload) throws {
        progress("JSON: RecordValidator.validate and JSONDecoder")
        let validator = try JSONCost.validatorNanoseconds(workload, passes: scale.jsonPasses)
        let decoder = try JSONCost.decoderNanoseconds(workload, passes: scale.jsonPasses)
        add(
            ResultRow(
                section: "3 JSON", name: "`RecordValidator.validate` (parse + validate) per line",
                value: "\(Format.fixed(validator / 1000, 2)) µs",
                comparison: "\(Format.ratio(validator / decoder)) the cost of `JSONDecoder` "
                    + "(\(Format.ratio(decoder / validator)) faster)"))
        add(
            ResultRow(
                section: "3 JSON", name: "Foundation `JSONDecoder` into a `Codable` struct, per line",
                value: "\(Format.fixed(decoder / 1000, 2)) µs", comparison: "reused decoder"))
    }

    private func measureBigJournal() throws {
        guard options.big else {
            add(
                ResultRow(
                    section: "4 Footprint", name: "process start → `READY=1`, 10M-record journal",
                    value: "not measured", comparison: "run with `--big`"))
            return
        }
        let count = options.bigRecords
        let path = newDatabase()
        progress("building a \(Format.grouped(Double(count)))-record journal")
        let seconds = try BigJournal.build(path: path, count: count) {
            self.progress("  \(Format.grouped(Double($0))) records")
        }
        let size = Double(Posix.CurrentProcess.fileSize(path) ?? 0) / 1_048_576
        // The journal was joined under the holding rules: the daemon gets them too, or it would recompute.
        let rulesPath = scratch.file("holding-rules.json")
        try QueryCost.writeHoldingRules(to: rulesPath)
        var readies: [Double] = []
        for attempt in 1...3 {
            let daemon = try startDaemon(
                label: "big-\(attempt)", databasePath: path, arguments: ["--rules", rulesPath])
            readies.append(daemon.readyMilliseconds)
            if attempt == 1 {
                add(try learnedUsersRow(daemon, records: count))
                add(quickCheckRow(daemon, records: count))
                add(try reviewRow(daemon, databasePath: path, records: count))
            }
            try daemon.stop()
        }
        let ready = readies.sorted()[readies.count / 2]
        let cli = options.resolvedCLIPath
        let reportRows = try QueryCost.reportRows(cli: cli, path: path, rulesPath: rulesPath, records: count)
        for row in reportRows { add(row) }
        reportOnBigJournal = try QueryCost.milliseconds(cli: cli, ["report", "--db", path, "--rules", rulesPath]).ms
        // Last, as it leaves the derived tables under other windows: SIGHUP with them recomputes every derived
        // table on the writer (issue 13).
        let reloading = try startDaemon(label: "big-reload", databasePath: path, arguments: ["--rules", rulesPath])
        try QueryCost.writeNarrowedRules(to: rulesPath)
        // A record every 100 ms during the reload, each of a user of its own (new to the journal).
        let reload = try reloading.reload(interval: 0.1) { index in
            Array(
                #"{"type":"capabilities","id":"reload-probe-\#(index)","ts":"2026-11-20T00:00:00Z","user":"u-probe-\#(index)","authorization":0}"#
                    .utf8)
        }
        try reloading.stop()
        try QueryCost.writeHoldingRules(to: rulesPath)
        let accepted = reload.answers.filter { $0.contains(#""status":"accepted""#) }.count
        let waits = reload.probeMilliseconds.sorted()
        add(
            ResultRow(
                section: "4 Footprint",
                name: "`SIGHUP` with other windows on a \(Format.grouped(Double(count)))-record journal → `READY=1`",
                value: "\(Format.fixed(reload.readyMilliseconds / 1000, 1)) s",
                comparison: "one record every 100 ms meanwhile: \(accepted) of \(waits.count) accepted, answered in "
                    + "median \(Format.fixed(waits[waits.count / 2], 1)) ms, p99 "
                    + "\(Format.fixed(waits[min(waits.count - 1, waits.count * 99 / 100)], 1)) ms, longest "
                    + "\(Format.fixed(waits.last ?? 0, 1)) ms"))
        readyOnBigJournal = ready
        add(
            ResultRow(
                section: "4 Footprint",
                name: "process start → `READY=1`, \(Format.grouped(Double(count)))-record journal",
                value: "\(Format.fixed(ready, 1)) ms",
                comparison: "median of 3 (\(readies.map { Format.fixed($0, 1) }.joined(separator: ", ")) ms); "
                    + "journal \(Format.fixed(size, 0)) MiB, built in \(Format.fixed(seconds, 0)) s, warm page cache"))
        scratch.removeDatabase(path)
    }

    /// `offertrack review` end to end on a big journal (issue 19: under 50 ms): finding the conversion's user by
    /// its id, connecting, sending one record and waiting for its durable commit; median of 5, each on another
    /// conversion.
    private func reviewRow(_ daemon: DaemonProcess, databasePath: String, records: Int) throws -> ResultRow {
        let connection = try Connection(path: databasePath, mode: .readOnly)
        let statement = try connection.prepare(
            "SELECT id FROM records WHERE type = 2 AND subscribed = 1 AND seq > ?1 LIMIT 1")
        var times: [Double] = []
        for run in 0..<5 {
            try statement.bind(Int64(records / 6 * (run + 1)), at: 1)
            guard try statement.step(), let conversion = statement.text(0) else { break }
            statement.reset()
            let arguments = [
                "review", "--db", databasePath, "--socket", daemon.socketPath, "--conversion", conversion,
                "--decision", "hold", "--reason", "test",
            ]
            times.append(try QueryCost.milliseconds(cli: options.resolvedCLIPath, arguments, runs: 1).ms)
        }
        let sorted = times.sorted()
        return ResultRow(
            section: "4 Footprint",
            name:
                "`offertrack review` end to end (lookup + send + durable ack), \(Format.grouped(Double(records)))-record journal",
            value: sorted.isEmpty ? "no conversion found" : "\(Format.fixed(sorted[sorted.count / 2], 1)) ms",
            comparison: "median of \(sorted.count) (\(sorted.map { Format.fixed($0, 1) }.joined(separator: ", ")) ms); "
                + "target ≤ 50 ms; includes starting the CLI process")
    }

    /// How long the start's `PRAGMA quick_check` took, from the daemon's own log line (it runs before `READY=1`).
    private func quickCheckRow(_ daemon: DaemonProcess, records: Int) -> ResultRow {
        let line = daemon.log.split(separator: "\n").first { $0.contains("quick_check of ") } ?? "not logged"
        let value = line.split(separator: " ").suffix(2).joined(separator: " ")
        return ResultRow(
            section: "4 Footprint",
            name: "`PRAGMA quick_check` at start, journal of \(Format.grouped(Double(records))) records",
            value: value, comparison: "part of process start → `READY=1`; warm page cache")
    }

    /// How long a restarted, idle daemon takes to learn which users the journal holds (until then the join
    /// probes the journal for every user of a batch), from its own log line.
    private func learnedUsersRow(_ daemon: DaemonProcess, records: Int) throws -> ResultRow {
        let marker = "the join knows every journaled user: "
        let seenAfter = try daemon.waitForLog(containing: marker, timeoutSeconds: 600)
        let line = daemon.log.split(separator: "\n").first { $0.contains(marker) } ?? ""
        let detail = line.firstRange(of: marker).map { String(line[$0.upperBound...]) } ?? String(line)
        return ResultRow(
            section: "4 Footprint",
            name:
                "restart → the join knows every user, idle daemon, journal of \(Format.grouped(Double(records))) records",
            value: "\(Format.fixed(seenAfter, 0)) ms", comparison: "after the spawn; the daemon says: \(detail)")
    }

    // MARK: Targets

    private func judgeTargets() {
        let judged = !options.smoke
        let eight = ingestByClients[8].map { $0 / baselineRowsPerSecond }
        report.targets.append(
            TargetVerdict(
                name: "durable ingest, 8 clients", goal: "≥ 0.5× baseline rows/s",
                measured: eight.map(Format.ratio) ?? "–", met: judged ? eight.map { $0 >= 0.5 } : nil))
        report.targets.append(
            TargetVerdict(
                name: "ingest with the join maintained", goal: "≥ 0.8× without it",
                measured: "\(Format.ratio(daemonJoinRatio)) through the daemon (8 clients); "
                    + "\(Format.ratio(joinRatio)) in process (journal writes alone)",
                met: judged && daemonJoinRatio > 0 ? daemonJoinRatio >= 0.8 : nil))
        report.targets.append(
            TargetVerdict(
                name: "`report` over 10M records", goal: "≤ 1 s",
                measured: reportOnBigJournal.map { "\(Format.fixed($0, 1)) ms" } ?? "– (needs `--big`)",
                met: judged && options.bigRecords >= 10_000_000 ? reportOnBigJournal.map { $0 <= 1000 } : nil))
        report.targets.append(
            TargetVerdict(
                name: "`export` of a day with 100,000 conversions", goal: "≤ 1 s",
                measured: busyDayExport.map {
                    "\(Format.fixed($0.milliseconds, 1)) ms for \(Format.grouped(Double($0.rows))) rows"
                } ?? "–",
                met: judged ? busyDayExport.map { $0.milliseconds <= 1000 && $0.rows >= 90_000 } : nil))
        let at10k = latencies.first { $0.offeredPerSecond == 10_000 }
        report.targets.append(
            TargetVerdict(
                name: "ack latency at 10,000 records/s", goal: "p99 ≤ 5 ms",
                measured: at10k.map { "p99 \(Format.fixed($0.p99Milliseconds, 2)) ms" } ?? "–",
                met: judged ? at10k.map { $0.p99Milliseconds <= 5 } : nil))
        report.targets.append(
            TargetVerdict(
                name: "returning users: durable ingest, 8 clients", goal: "≥ 0.35× plain SQLite in C (`id` only)",
                measured: (returningRatio.map(Format.ratio) ?? "– (needs --peers)")
                    + (returningDeferredCeiling.map {
                        " (SQLite in C with the per-user index deferred, no join: \(Format.ratio($0)))"
                    } ?? ""),
                met: judged ? returningRatio.map { $0 >= 0.35 } : nil))
        report.targets.append(
            TargetVerdict(
                name: "returning users: durable ingest, 8 clients",
                goal: "≥ 0.8× SQLite with the schema's own per-user index (integer keys)",
                measured: returningOwnIndexRatio.map(Format.ratio) ?? "– (needs --peers)",
                met: judged ? returningOwnIndexRatio.map { $0 >= 0.8 } : nil))
        report.targets.append(
            TargetVerdict(
                name: "returning users: `--journal-only`, 8 clients", goal: "≥ 0.8× plain SQLite in C",
                measured: returningJournalOnlyRatio.map(Format.ratio) ?? "– (needs --peers)",
                met: judged ? returningJournalOnlyRatio.map { $0 >= 0.8 } : nil))
        let returningP99 = returningLatencies.map(\.p99Milliseconds).sorted()
        let returningP999 = returningLatencies.map(\.p999Milliseconds).sorted()
        report.targets.append(
            TargetVerdict(
                name: "returning users: ack latency at 10,000 records/s", goal: "p99 ≤ 5 ms, p999 ≤ 15 ms (every run)",
                measured: returningP99.isEmpty
                    ? "–"
                    : "p99 \(Format.fixed(returningP99.first ?? 0, 2))–\(Format.fixed(returningP99.last ?? 0, 2)) ms, "
                        + "p999 \(Format.fixed(returningP999.first ?? 0, 2))–\(Format.fixed(returningP999.last ?? 0, 2)) ms",
                met: judged && !returningP99.isEmpty
                    ? (returningP99.last ?? 0) <= 5 && (returningP999.last ?? 0) <= 15 : nil))
        report.targets.append(
            TargetVerdict(
                name: "a probe's latency during a flood (8 pipelining clients)", goal: "p99 ≤ 100 ms",
                measured: floodProbe.map { "p99 \(Format.fixed($0.p99Milliseconds, 2)) ms" } ?? "–",
                met: judged ? floodProbe.map { $0.p99Milliseconds <= 100 } : nil))
        report.targets.append(
            TargetVerdict(
                name: "answers while a busy day exports (\(Format.grouped(scale.exportStall.recordsPerSecond)) "
                    + "records/s, \(scale.exportStall.clients) clients)",
                goal: "≤ 250 ms longest answer while a busy day exports",
                measured: exportStall.map {
                    "max \(Format.fixed($0.during.maxMilliseconds, 2)) ms (p99 \(Format.fixed($0.during.p99Milliseconds, 2)) "
                        + "ms) during a \(Format.fixed($0.exportMilliseconds, 0)) ms export of "
                        + "\(Format.grouped(Double($0.exportRows))) rows"
                } ?? "–",
                met: judged ? exportStall.map { $0.during.maxMilliseconds <= 250 && $0.marginAfterSeconds >= 0 } : nil))
        judgeHotUserTargets(judged: judged)
        report.targets.append(
            TargetVerdict(
                name: "RSS, 1,000 idle connections", goal: "≤ 64 MiB",
                measured: rssIdle.map { "\(Format.fixed($0.peakMiB, 1)) MiB" } ?? "–",
                met: judged ? rssIdle.map { $0.peakMiB <= 64 } : nil))
        report.targets.append(
            TargetVerdict(
                name: "RSS, 64 clients", goal: "≤ 128 MiB",
                measured: rssUnderLoad.map { "\(Format.fixed($0.peakMiB, 1)) MiB" } ?? "–",
                met: judged ? rssUnderLoad.map { $0.peakMiB <= 128 } : nil))
        report.targets.append(
            TargetVerdict(
                name: "READY on a 10M-record journal", goal: "≤ 200 ms",
                measured: readyOnBigJournal.map { "\(Format.fixed($0, 1)) ms" } ?? "– (needs `--big`)",
                met: judged && options.bigRecords >= 10_000_000 ? readyOnBigJournal.map { $0 <= 200 } : nil))
    }

    /// Issue 31's targets: a record of one very busy user costs about what it costs with a short history, and
    /// a share of realistic traffic naming one user slows the rest little.
    private func judgeHotUserTargets(judged: Bool) {
        let hot = hotUsers
        let cpu = hot.flatMap { result -> (ratio: Double, text: String)? in
            guard let ratio = result.cpuRatio, let largest = result.largest, let smallest = result.smallest else {
                return nil
            }
            return (
                ratio,
                "\(Format.ratio(ratio)) (\(Format.fixed(largest.cpuMicroseconds, 1)) µs after "
                    + "\(Format.grouped(Double(largest.history))) records, \(Format.fixed(smallest.cpuMicroseconds, 1)) µs "
                    + "after \(Format.grouped(Double(smallest.history))))"
            )
        }
        let fullHistories = hot?.largest?.history == 1_000_000 && hot?.smallest?.history == 10
        report.targets.append(
            TargetVerdict(
                name: "one user with a 1,000,000-record history: daemon CPU a record",
                goal: "≤ 2× a 10-record history's", measured: cpu?.text ?? "–",
                met: judged && fullHistories ? cpu.map { $0.ratio <= 2 } : nil))
        let p99Ratio = hot?.p99Ratio
        report.targets.append(
            TargetVerdict(
                name: "\(scale.hot.percent)% of realistic traffic naming one user: ack latency at "
                    + "\(Format.grouped(scale.hot.pacedRate)) records/s, \(scale.hot.clients) clients",
                goal: "p99 ≤ 2× the traffic as it is",
                measured: p99Ratio.map {
                    "\(Format.ratio($0)) (p99 \(Format.fixed(hot?.pacedHot?.p99Milliseconds ?? 0, 2)) against "
                        + "\(Format.fixed(hot?.pacedPlain?.p99Milliseconds ?? 0, 2)) ms)"
                } ?? "–",
                met: judged ? p99Ratio.map { $0 <= 2 } : nil))
        let rateRatio = hot?.pipelined?.medianRatio
        report.targets.append(
            TargetVerdict(
                name: "\(scale.hot.percent)% of realistic traffic naming one user: pipelined ingest, "
                    + "\(scale.hot.clients) clients",
                goal: "≥ 0.8× the traffic as it is",
                measured: rateRatio.map(Format.ratio) ?? "–", met: judged ? rateRatio.map { $0 >= 0.8 } : nil))
    }

    // MARK: Helpers

    private func startDaemon(label: String, databasePath: String, arguments: [String] = []) throws -> DaemonProcess {
        try DaemonProcess(
            binary: options.resolvedDaemonPath, scratch: scratch, databasePath: databasePath, label: label,
            arguments: arguments)
    }

    private func newDatabase() -> String {
        databaseNumber += 1
        return scratch.file("journal-\(databaseNumber).db")
    }

    /// Adds a row to the report and shows it at once (a long run shows its numbers as it goes).
    private func add(_ row: ResultRow) {
        report.rows.append(row)
        progress("  \(row.name): \(row.value) (\(row.comparison))")
    }

    private func progress(_ message: String) {
        FileDescriptor.printError("offertrack-bench: \(message)")
    }
}
