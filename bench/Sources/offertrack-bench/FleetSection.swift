import Foundation
import Posix
import Synchronization
import TestSupport

/// How big the fleet section is: the full run, or `--smoke` (seconds, a short outage).
struct FleetScale {
    /// Throughput: `simulate --returning` records and users (section 6's), pipelining clients, alternating pairs.
    var throughputRecords: Int
    var throughputUsers: Int
    var clients: Int
    var pairs: Int
    /// Lag: the steady load offered to the edges and for how long.
    var lagRate: Double
    var lagSeconds: Double
    /// Outage: the steady load, how long before the stream goes down, how long it stays down, the records
    /// budgeted for the drain (the load goes on while the edges catch up), how often the edges' RSS is sampled.
    var outageRate: Double
    var preOutageSeconds: Double
    var outageSeconds: Double
    var drainBudgetSeconds: Double
    var rssInterval: Double
    /// How long, after the load, the central journals may take to hold every record sent before the section
    /// reports that they did not (a stream whose nodes were all killed at once can lose acknowledged messages:
    /// nats-server 2.9 acknowledges before it syncs, so the edges must forward those again).
    var convergeSeconds: Double

    static let full = FleetScale(
        throughputRecords: 300_000, throughputUsers: 50_000, clients: 8, pairs: 3, lagRate: 10_000, lagSeconds: 60,
        outageRate: 2_000, preOutageSeconds: 20, outageSeconds: 600, drainBudgetSeconds: 480, rssInterval: 1,
        convergeSeconds: 600)

    static let smoke = FleetScale(
        throughputRecords: 1_500, throughputUsers: 300, clients: 4, pairs: 1, lagRate: 1_000, lagSeconds: 1,
        outageRate: 500, preOutageSeconds: 0.5, outageSeconds: 1.5, drainBudgetSeconds: 20, rssInterval: 0.1,
        convergeSeconds: 60)
}

/// Section 7: the fleet (SPEC section 10, issue 16). Three measurements, each on a fresh fleet (`FleetUnderTest`):
///
/// 1. Throughput end to end: the returning-user records pipelined by the clients into two edges, timed from
///    the first send until the central journals (two central daemons, then one) hold every record, beside one
///    daemon ingesting the same records from the same clients (alternating runs); and each kind of process's
///    CPU seconds (edges, nats-server nodes, centrals) per 1,000 records.
/// 2. Lag under a steady load offered to the edges: the edges' forwarding lag (`journal last seq − forwarded
///    watermark`, from their metrics every 100 ms) and each record's delay from its edge acknowledgement to
///    its central commit (the central journals polled every 5 ms).
/// 3. A whole-stream outage under a steady load: the edges' RSS sampled throughout, then the time to drain
///    once the stream is back.
final class FleetSection {
    private let daemonPath: String
    /// The `offertrack` CLI beside the daemon (`BenchOptions.resolvedCLIPath`).
    private let cliPath: String
    private let scratch: ScratchDirectory
    private let scale: FleetScale
    private let newDatabase: () -> String
    private let add: (ResultRow) -> Void
    private let progress: (String) -> Void
    private var fleetNumber = 0
    static let section = "7 Fleet"

    init(
        daemonPath: String, cliPath: String, scratch: ScratchDirectory, scale: FleetScale,
        newDatabase: @escaping () -> String,
        add: @escaping (ResultRow) -> Void, progress: @escaping (String) -> Void
    ) {
        self.daemonPath = daemonPath
        self.cliPath = cliPath
        self.scratch = scratch
        self.scale = scale
        self.newDatabase = newDatabase
        self.add = add
        self.progress = progress
    }

    /// Runs `parts` (`throughput`, `lag`, `outage`; nil: all three) in that order.
    func run(parts: Set<String>? = nil) throws {
        guard FleetCluster.isAvailable else {
            add(
                ResultRow(
                    section: Self.section, name: "the fleet (2 edges, 2 central daemons, 3 nats-server nodes)",
                    value: "not measured", comparison: "no \(FleetCluster.serverPath) (apt-get install nats-server)"))
            return
        }
        let all: [(String, () throws -> Void)] = [
            ("throughput", measureThroughput), ("lag", measureLag), ("outage", measureOutage),
        ]
        for (name, measure) in all where parts?.contains(name) ?? true {
            FileSystem.syncAll()
            try measure()
        }
    }

    private func newFleet(centrals: Int = 2) throws -> (fleet: FleetUnderTest, warm: Int64) {
        fleetNumber += 1
        let start = Stopwatch.now()
        let fleet = try FleetUnderTest(
            daemonPath: daemonPath, scratch: scratch, label: "fleet\(fleetNumber)", centralCount: centrals,
            newDatabase: newDatabase)
        let up = Stopwatch.seconds(since: start)
        let warm = try fleet.warmUp()
        progress(
            "fleet \(fleetNumber): 3 nats-server nodes and \(2 + centrals) daemons up in \(Format.fixed(up, 1)) s, "
                + "the warm-up records in the central journals "
                + "\(Format.fixed(Stopwatch.seconds(since: start) - up, 1)) s later")
        return (fleet, warm)
    }

    private static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    // MARK: 1. Throughput

    /// One fleet run of the throughput part: records/s end to end and at the edges' acknowledgements, and each
    /// kind of process's CPU seconds from the first send until the central journals hold every record.
    private struct FleetRun {
        let rate: Double
        let edgeRate: Double
        let cpu: (edges: Double, servers: Double, centrals: Double)
        /// Records per message the stream holds at the end (the warm-up's included); nil when no node said.
        let recordsPerMessage: Double?
    }

    private func runFleet(_ workload: Workload, centrals: Int) throws -> FleetRun {
        FileSystem.syncAll()
        let (fleet, warm) = try newFleet(centrals: centrals)
        let slices = workload.interleaved(into: scale.clients)
        let connections = try slices.enumerated().map { index, slice in
            try PipelinedClient(socketPath: fleet.edgeSockets[index % fleet.edges.count], records: slice)
        }
        let watch = CentralWatch(paths: fleet.centralJournals, recordIDs: false)
        let cpuBefore = fleet.cpuSeconds()
        let start = Stopwatch.now()
        let workers = connections.flatMap { $0.start() }
        for worker in workers { worker.join() }
        for connection in connections { try connection.check() }
        let acknowledged = connections.map(\.finishedAt).max() ?? start
        watch.start(interval: 0.005)
        let end = CentralWatch.waitUntil(watch, holds: warm + Int64(workload.count), timeoutSeconds: 900)
        watch.stop()
        let cpuAfter = fleet.cpuSeconds()
        guard let end else {
            throw BenchFailure("the central journals hold \(watch.held) of \(warm + Int64(workload.count)) records")
        }
        let messages = fleet.cluster.streamMessages()
        try fleet.stop()
        return FleetRun(
            rate: Double(workload.count) / (Double(end - start) / 1e9),
            edgeRate: Double(workload.count) / (Double(acknowledged - start) / 1e9),
            cpu: (
                cpuAfter.edges - cpuBefore.edges, cpuAfter.servers - cpuBefore.servers,
                cpuAfter.centrals - cpuBefore.centrals
            ),
            recordsPerMessage: messages.flatMap {
                $0 > 0 ? Double(warm + Int64(workload.count)) / Double($0) : nil
            })
    }

    private func measureThroughput() throws {
        let workload = Workload(returningUsers: scale.throughputUsers, records: scale.throughputRecords)
        let clients = scale.clients
        progress(
            "fleet: \(Format.grouped(Double(workload.count))) returning-user records, \(clients) clients, fleet "
                + "end to end with two central daemons, one daemon, the fleet with one central daemon, alternating, "
                + "\(scale.pairs) rounds")
        var two: [FleetRun] = []
        var one: [FleetRun] = []
        var single: [Double] = []
        for _ in 0..<max(1, scale.pairs) {
            two.append(try runFleet(workload, centrals: 2))
            FileSystem.syncAll()
            let daemon = try DaemonProcess(
                binary: daemonPath, scratch: scratch, databasePath: newDatabase(), label: "fleet-single")
            single.append(
                try IngestThroughput.measure(
                    workload, clients: clients, socketPath: daemon.socketPath, interleaved: true))
            try daemon.stop()
            one.append(try runFleet(workload, centrals: 1))
        }
        let runs = { (values: [Double]) in values.map(Format.grouped).joined(separator: ", ") }
        add(
            ResultRow(
                section: Self.section,
                name: "**baseline**: one offertrackd (default, the join kept current), the same records and "
                    + "\(clients) clients",
                value: "\(Format.grouped(PairedRuns.median(single))) records/s",
                comparison: "runs: \(runs(single))"))
        for (centrals, fleetRuns) in [(2, two), (1, one)] {
            let rates = fleetRuns.map(\.rate)
            let ratios = zip(rates, single).map { $0 / $1 }
            let layout = centrals == 2 ? "2 central daemons (8 partitions each)" : "1 central daemon (16 partitions)"
            add(
                ResultRow(
                    section: Self.section,
                    name: "fleet end to end: 2 edges → JetStream R3 (3 nodes) → \(layout), first send until the "
                        + "central journals hold every record",
                    value: "\(Format.grouped(PairedRuns.median(rates))) records/s",
                    comparison: "\(Format.ratio(PairedRuns.median(ratios))) of one daemon (median of "
                        + "\(ratios.count) rounds: \(ratios.map(Format.ratio).joined(separator: ", "))); runs: "
                        + runs(rates)))
            let perThousand = { (seconds: [Double]) in
                Format.fixed(PairedRuns.median(seconds) / Double(workload.count) * 1000, 3)
            }
            add(
                ResultRow(
                    section: Self.section,
                    name: "fleet with \(layout): CPU seconds per 1,000 records, edges (2) / nats-server (3 nodes) / "
                        + "central\(centrals == 2 ? "s (2)" : "")",
                    value: "\(perThousand(fleetRuns.map(\.cpu.edges))) / \(perThousand(fleetRuns.map(\.cpu.servers)))"
                        + " / \(perThousand(fleetRuns.map(\.cpu.centrals))) s",
                    comparison: "user + system time of each kind of process together, from the first send until the "
                        + "central journals hold every record (median of \(fleetRuns.count) runs), over "
                        + "\(Format.grouped(Double(workload.count))) records"))
            let perMessage = fleetRuns.compactMap(\.recordsPerMessage)
            add(
                ResultRow(
                    section: Self.section,
                    name: "fleet with \(layout): records per stream message",
                    value: perMessage.isEmpty ? "not measured" : Format.fixed(PairedRuns.median(perMessage), 1),
                    comparison: "the stream's messages at the end (nats-server's /jsz) for the records sent; runs: "
                        + perMessage.map { Format.fixed($0, 1) }.joined(separator: ", ")))
        }
        add(
            ResultRow(
                section: Self.section,
                name: "fleet: the edges' acknowledgements alone (`--journal-only`), \(clients / 2) clients each",
                value: "\(Format.grouped(Self.median(two.map(\.edgeRate) + one.map(\.edgeRate)))) records/s",
                comparison: "runs: \(runs(two.map(\.edgeRate) + one.map(\.edgeRate))); the central journals finish "
                    + "after the edges have answered"))
    }

    // MARK: 2. Lag under a steady load

    private func measureLag() throws {
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

    // MARK: 3. A stream outage

    private struct RSSSample {
        let seconds: Double
        let kib: [Int]
    }

    private func measureOutage() throws {
        let count = Int(scale.outageRate * (scale.preOutageSeconds + scale.outageSeconds + scale.drainBudgetSeconds))
        progress("fleet outage: generating \(Format.grouped(Double(count))) returning-user records")
        let records = FleetRecords(count: count, seed: 3)
        progress(
            "fleet outage: \(Format.grouped(scale.outageRate)) records/s to 2 edges; the whole stream down for "
                + "\(Format.fixed(scale.outageSeconds, 1)) s after \(Format.fixed(scale.preOutageSeconds, 1)) s")
        let (fleet, warm) = try newFleet()
        let probes = fleet.edges.map { EdgeJournalProbe(path: $0.databasePath) }
        let pids = fleet.edges.map(\.pid)
        let origin = Stopwatch.now()
        let samples = Mutex<[RSSSample]>([])
        let rss = FleetSampler(name: "bench-fleet-rss", interval: scale.rssInterval) {
            let kib = pids.map { (try? ProcessMemory.read(pid: $0).currentKiB) ?? 0 }
            samples.withLock { $0.append(RSSSample(seconds: Stopwatch.seconds(since: origin), kib: kib)) }
        }
        let load = try FleetLoad(
            records: records, socketPaths: fleet.edgeSockets, connectionsPerSocket: max(1, scale.clients / 2),
            recordsPerSecond: scale.outageRate)
        load.start()
        Stopwatch.sleep(seconds: scale.preOutageSeconds)
        let downAt = Stopwatch.seconds(since: origin)
        fleet.cluster.kill()
        progress("fleet outage: the stream is down (all three nodes killed)")
        Stopwatch.sleep(seconds: scale.outageSeconds)
        let lastAtBack = try probes.map { try $0.lastSeq() }
        let backlog = try zip(probes, lastAtBack).map { probe, last in last - (try probe.watermark()) }
        let memoryAtBack = try pids.map { try ProcessMemory.read(pid: $0) }
        let backAt = Stopwatch.seconds(since: origin)
        try fleet.cluster.start()
        let backlogText = backlog.map { Format.grouped(Double($0)) }.joined(separator: " + ")
        progress("fleet outage: the stream is back; backlog \(backlogText) records")
        // Drained: every record journaled while the stream was down is acknowledged by the stream (the edges'
        // watermarks pass their last seq of then), and the central journals hold as many records as the edges
        // had then; the load goes on meanwhile.
        let watch = CentralWatch(paths: fleet.centralJournals, recordIDs: false)
        let target = lastAtBack.reduce(0, +)
        var edgeDrained: [Double?] = probes.map { _ in nil }
        var centralDrained: Double?
        let drainDeadline = backAt + max(60, scale.drainBudgetSeconds * 3)
        while edgeDrained.contains(where: { $0 == nil }) || centralDrained == nil {
            let now = Stopwatch.seconds(since: origin)
            guard now < drainDeadline else { break }
            for (index, probe) in probes.enumerated() where edgeDrained[index] == nil {
                if (try? probe.watermark()) ?? 0 >= lastAtBack[index] { edgeDrained[index] = now - backAt }
            }
            if centralDrained == nil && watch.pollNow() >= target { centralDrained = now - backAt }
            Stopwatch.sleep(seconds: 0.1)
        }
        load.stop()
        try load.join()
        let sent = warm + Int64(load.sentCount)
        var converged = false
        let deadline = Stopwatch.now() + UInt64(scale.convergeSeconds * 1e9)
        while Stopwatch.now() < deadline {
            if watch.pollNow() >= sent {
                converged = true
                break
            }
            Stopwatch.sleep(seconds: 0.1)
        }
        rss.stop()
        let peaks = try pids.map { try ProcessMemory.read(pid: $0) }
        try fleet.stop()
        let all = samples.withLock { $0 }
        addOutageRows(
            all, downAt: downAt, backAt: backAt, memoryAtBack: memoryAtBack, peaks: peaks, backlog: backlog,
            edgeDrained: edgeDrained, centralDrained: centralDrained, sent: sent, held: watch.held,
            converged: converged)
        if !converged { try reconcile(fleet) }
    }

    /// What `offertrack verify --edge` says of the stopped fleet's journals: which acknowledged records no central
    /// journal holds (a stream that lost messages its consumers had acknowledged).
    private func reconcile(_ fleet: FleetUnderTest) throws {
        let outputPath = scratch.file("fleet-verify-edge.txt")
        let child = try ChildProcess(
            [cliPath, "verify"] + fleet.edges.flatMap { ["--edge", $0.databasePath] }
                + fleet.centralJournals.flatMap { ["--db", $0] },
            environment: ["PATH": "/usr/bin:/bin"], stdoutPath: outputPath, stderrPath: outputPath)
        let status = child.wait()
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let edgeLines = output.split(separator: "\n").drop { !$0.contains("edge ") }
        add(
            ResultRow(
                section: Self.section, name: "not converged: `offertrack verify --edge` over the fleet's journals",
                value: "exit \(status)",
                comparison: edgeLines.prefix(24).map { $0.trimmingCharacters(in: .whitespaces) }.joined(
                    separator: "; ")))
    }

    private func addOutageRows(
        _ samples: [RSSSample], downAt: Double, backAt: Double, memoryAtBack: [ProcessMemory], peaks: [ProcessMemory],
        backlog: [Int64], edgeDrained: [Double?], centralDrained: Double?, sent: Int64, held: Int64, converged: Bool
    ) {
        let mib = { (kib: Int) in Double(kib) / 1024 }
        let minute = min(60, scale.outageSeconds / 4)
        let duration =
            scale.outageSeconds >= 60
            ? "\(Format.fixed(scale.outageSeconds / 60, 1))-minute" : "\(Format.fixed(scale.outageSeconds, 1))-second"
        for edge in memoryAtBack.indices {
            let before = samples.filter { $0.seconds < downAt }.map { mib($0.kib[edge]) }
            let during = samples.filter { $0.seconds >= downAt && $0.seconds <= backAt }
            let values = during.map { mib($0.kib[edge]) }
            let first = during.filter { $0.seconds < downAt + minute }.map { mib($0.kib[edge]) }
            let last = during.filter { $0.seconds > backAt - minute }.map { mib($0.kib[edge]) }
            let mean = { (values: [Double]) in values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count) }
            let slope = Distribution.slope(values, over: during.map { $0.seconds / 60 })
            let drain = samples.filter { $0.seconds > backAt }.map { mib($0.kib[edge]) }
            // The shape over the outage: mean VmRSS of each tenth of it.
            let tenth = (backAt - downAt) / 10
            let shape = (0..<10).map { part in
                mean(
                    during.filter {
                        $0.seconds >= downAt + Double(part) * tenth && $0.seconds < downAt + Double(part + 1) * tenth
                    }.map { mib($0.kib[edge]) })
            }.map { Format.fixed($0, 0) }.joined(separator: ", ")
            add(
                ResultRow(
                    section: Self.section,
                    name: "edge \(edge + 1) RSS through a \(duration) stream outage at "
                        + "\(Format.grouped(scale.outageRate / 2)) records/s each: before / max during / "
                        + "at its end",
                    value: "\(Format.fixed(before.last ?? 0, 1)) / \(Format.fixed(values.max() ?? 0, 1)) / "
                        + "\(Format.fixed(memoryAtBack[edge].currentMiB, 1)) MiB",
                    comparison: "VmRSS every \(Format.fixed(scale.rssInterval, 1)) s (\(values.count) samples); mean "
                        + "of the first \(Format.fixed(minute, 1)) s \(Format.fixed(mean(first), 1)) MiB, of the last "
                        + "\(Format.fixed(mean(last), 1)) MiB; by tenths of the outage \(shape) MiB; slope "
                        + "\(Format.fixed(slope, 2)) MiB/min; VmHWM "
                        + "\(Format.fixed(memoryAtBack[edge].peakMiB, 1)) MiB at the end of the outage, "
                        + "\(Format.fixed(peaks[edge].peakMiB, 1)) MiB after the drain (max VmRSS while draining "
                        + "\(Format.fixed(drain.max() ?? 0, 1)) MiB)"))
        }
        let drained = edgeDrained.map { $0.map { "\(Format.fixed($0, 1)) s" } ?? "not drained" }
        let rate = { (seconds: Double?) in
            seconds.map { Format.grouped(Double(backlog.reduce(0, +)) / max(0.001, $0)) } ?? "–"
        }
        add(
            ResultRow(
                section: Self.section,
                name: "fleet drain after the outage: stream back → the edges' watermarks pass every record journaled "
                    + "while it was down / the central journals hold as many",
                value: "\(drained.joined(separator: ", ")) / "
                    + "\(centralDrained.map { "\(Format.fixed($0, 1)) s" } ?? "not drained")",
                comparison: "backlog \(backlog.map { Format.grouped(Double($0)) }.joined(separator: " + ")) records "
                    + "(\(rate(edgeDrained.compactMap { $0 }.max())) records/s forwarded, "
                    + "\(rate(centralDrained)) records/s consumed, beside the load that went on); in the end the "
                    + "central journals held \(Format.grouped(Double(held))) of \(Format.grouped(Double(sent))) "
                    + "records sent\(converged ? "" : " (NOT converged within \(Int(scale.convergeSeconds)) s)")"))
    }
}
