import Foundation
import JournalStore
import OfferTrackDomain
import Posix
import SQLite
import TestSupport

/// Returning-user traffic against the plain SQLite C baselines, and its latency.
extension BenchRun {
    func measureReturning() throws {
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
        // CPU a row of the C baseline with the schema's own per-user index, the same rounds.
        var integerCPU: [Double] = []
        var defaults: [Double] = []
        var defaultsCPU: [Double] = []
        var journalOnly: [Double] = []
        progress("returning users: C baselines, offertrackd and --journal-only, alternating, \(scale.pairs) rounds")
        for _ in 0..<max(1, min(3, scale.pairs)) {
            if let peers = options.peersPath {
                for (index, _) in indexes + [deferredIndex] {
                    FileSystem.syncAll()
                    let measured = try Returning.rateAndCPU(
                        "\(peers)/sqlite-baseline", [file, newDatabase(), "1000", index])
                    baselines[index, default: []].append(measured.rate)
                    if index == "integer" { integerCPU.append(measured.cpuSeconds * 1e6 / Double(workload.count)) }
                }
            }
            FileSystem.syncAll()
            let daemon = try startDaemon(label: "returning", databasePath: newDatabase())
            let measured = try IngestThroughput.measureWithCPU(
                workload, clients: clients, socketPath: daemon.socketPath, interleaved: true, pid: daemon.pid)
            defaults.append(measured.rate)
            if let cpu = measured.cpuMicroseconds { defaultsCPU.append(cpu) }
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
        returningCPUMicroseconds = defaultsCPU.isEmpty ? nil : median(defaultsCPU)
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
                    + "runs \(defaults.map { Format.grouped($0) }.joined(separator: ", ")); target "
                    + "≥ 0.8× of the schema's own per-user index"))
        if !defaultsCPU.isEmpty {
            // Beside the C baselines' rates: what one returning record costs the daemon, whatever the machine's load.
            add(
                ResultRow(
                    section: "6 Returning users",
                    name: "offertrackd daemon CPU a returning record, the same runs (user + system, first send to "
                        + "last answer)",
                    value: "\(Format.fixed(median(defaultsCPU), 1)) µs",
                    comparison: "runs " + defaultsCPU.map { Format.fixed($0, 1) }.joined(separator: ", ")
                        + " µs; /proc/PID/stat, 10 ms ticks; target ≤ 15 µs (issue 31)"
                        + (integerCPU.isEmpty
                            ? ""
                            : "; \(Format.ratio(median(defaultsCPU) / median(integerCPU))) of plain SQLite in C with "
                                + "the same per-user index, whose whole process (reading the file, picking the "
                                + "fields, inserting 1,000 rows a transaction) spent "
                                + "\(Format.fixed(median(integerCPU), 1)) µs a row (runs "
                                + integerCPU.map { Format.fixed($0, 1) }.joined(separator: ", ") + ")")))
        }
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
    static func latencyFigures(_ runs: [LatencyResult], _ median: ([Double]) -> Double) -> String {
        guard !runs.isEmpty else { return "–" }
        let figures: [KeyPath<LatencyResult, Double>] = [
            \.p50Milliseconds, \.p99Milliseconds, \.p999Milliseconds, \.maxMilliseconds,
        ]
        return figures.map { figure in Format.fixed(median(runs.map { $0[keyPath: figure] }), 2) }.joined(
            separator: " / ") + " ms"
    }
}
