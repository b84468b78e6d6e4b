import Foundation
import Posix
import Synchronization
import TestSupport

/// Part 2: lag under a steady load.
extension FleetSection {
    func measureLag() throws {
        let count = Int(scale.lagRate * scale.lagSeconds)
        progress("fleet lag: generating \(Format.grouped(Double(count))) returning-user records")
        let records = FleetRecords(count: count, seed: 2)
        var indexOf: [String: Int] = [:]
        indexOf.reserveCapacity(records.count)
        for (index, id) in records.ids.enumerated() { indexOf[id] = index }
        progress(
            "fleet lag: \(Format.grouped(scale.lagRate)) records/s offered to 2 edges over \(scale.clients) "
                + "connections for \(Format.fixed(scale.lagSeconds, 1)) s")
        let (fleet, warm) = try newFleet()
        let watch = CentralWatch(paths: fleet.centralJournals, recordIDs: true)
        watch.start(interval: 0.005)
        let forwardLags = Mutex<[Double]>([])
        let consumeLags = Mutex<[Double]>([])
        let edgePorts = fleet.edgeMetricsPorts
        let centralPorts = fleet.centralMetricsPorts
        let metrics = FleetSampler(name: "bench-fleet-metrics", interval: 0.1) {
            for port in edgePorts {
                if let lag = MetricsProbe.value("offertrack_forward_lag_records", port: port) {
                    forwardLags.withLock { $0.append(lag) }
                }
            }
            for port in centralPorts {
                if let lag = MetricsProbe.value("offertrack_consume_lag_records", port: port) {
                    consumeLags.withLock { $0.append(lag) }
                }
            }
        }
        let load = try FleetLoad(
            records: records, socketPaths: fleet.edgeSockets, connectionsPerSocket: max(1, scale.clients / 2),
            recordsPerSecond: scale.lagRate)
        let cpuBefore = fleet.cpuSeconds()
        load.start()
        try load.join()
        let sendSeconds = Stopwatch.seconds(since: load.startedAt)
        metrics.stop()
        let edgeMemory = try fleet.edges.map { try $0.memory() }
        let lastSent = Stopwatch.now()
        let drained = CentralWatch.waitUntil(watch, holds: warm + Int64(records.count), timeoutSeconds: 900)
        watch.stop()
        guard let drained else {
            throw BenchFailure("the central journals hold \(watch.held) of \(warm + Int64(records.count)) records")
        }
        let cpuAfter = fleet.cpuSeconds()
        let messages = fleet.cluster.streamMessages()
        try fleet.stop()
        // Each record's delay from its edge acknowledgement to the poll that first saw it centrally.
        var delays: [Double] = []
        var byWindow: [Int: [Double]] = [:]
        var early = 0
        delays.reserveCapacity(records.count)
        for (id, seenAt) in watch.seen {
            guard let index = indexOf[id] else { continue }
            let acknowledged = load.answered(index)
            let delay = Double(Int64(bitPattern: seenAt &- acknowledged)) / 1e6
            if delay < 0 { early += 1 }
            delays.append(max(0, delay))
            byWindow[Int(Double(acknowledged &- load.startedAt) / 1e9 / 10), default: []].append(max(0, delay))
        }
        let forward = forwardLags.withLock { $0 }
        let consume = consumeLags.withLock { $0 }
        let windows = byWindow.keys.sorted().map { Format.fixed(Distribution.percentile(byWindow[$0] ?? [], 0.99), 0) }
        add(
            ResultRow(
                section: Self.section,
                name: "fleet lag at \(Format.grouped(scale.lagRate)) records/s offered to 2 edges: forwarding lag "
                    + "(journal last seq − forwarded watermark) p50 / p99 / max",
                value: "\(Distribution.summary(forward, places: 0)) records",
                comparison: "\(forward.count) samples of the edges' `offertrack_forward_lag_records` every 100 ms over "
                    + "\(Format.fixed(sendSeconds, 1)) s (achieved \(Format.grouped(Double(records.count) / sendSeconds))"
                    + " records/s); the edges' VmRSS / VmHWM at its end (the stream up): "
                    + edgeMemory.map { "\(Format.fixed($0.currentMiB, 1)) / \(Format.fixed($0.peakMiB, 1))" }
                    .joined(separator: ", ") + " MiB"))
        add(
            ResultRow(
                section: Self.section,
                name: "fleet lag at \(Format.grouped(scale.lagRate)) records/s: edge acknowledgement → central commit "
                    + "p50 / p99 / p999 / max",
                value: [0.5, 0.99, 0.999].map { Format.fixed(Distribution.percentile(delays, $0), 1) }
                    .joined(separator: " / ") + " / \(Format.fixed(delays.max() ?? 0, 1)) ms",
                comparison: "\(Format.grouped(Double(delays.count))) records, each seen by polling the central "
                    + "journals every 5 ms (\(early) seen before their acknowledgement was read, counted 0); p99 by "
                    + "10 s of acknowledgements: \(windows.joined(separator: ", ")) ms; the last record reached the "
                    + "central journals \(Format.fixed(Double(drained &- lastSent) / 1e9, 1)) s after the load ended "
                    + "(\(Format.grouped(Double(records.count) / (Double(drained &- load.startedAt) / 1e9))) "
                    + "records/s end to end)"))
        add(
            ResultRow(
                section: Self.section,
                name: "fleet lag at \(Format.grouped(scale.lagRate)) records/s: the centrals' consuming lag "
                    + "p50 / p99 / max",
                value: "\(Distribution.summary(consume, places: 0)) records",
                comparison: "\(consume.count) samples of `offertrack_consume_lag_records` every 100 ms (records of "
                    + "their partitions in the stream not yet consumed, as of each fetch: the messages left times the "
                    + "fetch's records per message)"))
        let perThousand = { (seconds: Double) in Format.fixed(seconds / Double(records.count) * 1000, 3) }
        add(
            ResultRow(
                section: Self.section,
                name:
                    "fleet lag at \(Format.grouped(scale.lagRate)) records/s: CPU seconds per 1,000 records, edges (2) "
                    + "/ nats-server (3 nodes) / centrals (2); records per stream message",
                value: "\(perThousand(cpuAfter.edges - cpuBefore.edges)) / "
                    + "\(perThousand(cpuAfter.servers - cpuBefore.servers)) / "
                    + "\(perThousand(cpuAfter.centrals - cpuBefore.centrals)) s; "
                    + (messages.map { Format.fixed(Double(warm + Int64(records.count)) / Double(max(1, $0)), 1) }
                        ?? "not measured"),
                comparison: "user + system time from the first send until the central journals hold every record; "
                    + "the stream's messages at the end (nats-server's /jsz) for the records sent"))
    }
}
