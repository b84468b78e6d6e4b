import AttributionJoin
import Foundation
import JournalStore
import OfferTrackDomain
import Posix
import SQLite
import TestSupport

/// The ingest sections: the plain SQLite baseline, pipelined ingest by clients, acknowledgement latency.
extension BenchRun {
    func measureBaseline(_ workload: Workload) throws {
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

    func measureIngest(_ workload: Workload) throws {
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

    func measureLatency(_ workload: Workload) throws {
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
}
