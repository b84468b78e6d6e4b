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
    let daemonPath: String
    /// The `offertrack` CLI beside the daemon (`BenchOptions.resolvedCLIPath`).
    let cliPath: String
    let scratch: ScratchDirectory
    let scale: FleetScale
    let newDatabase: () -> String
    let add: (ResultRow) -> Void
    let progress: (String) -> Void
    var fleetNumber = 0
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

    func newFleet(centrals: Int = 2) throws -> (fleet: FleetUnderTest, warm: Int64) {
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

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    // MARK: 1. Throughput

    /// One fleet run of the throughput part: records/s end to end and at the edges' acknowledgements, and each
    /// kind of process's CPU seconds from the first send until the central journals hold every record.
    struct FleetRun {
        let rate: Double
        let edgeRate: Double
        let cpu: (edges: Double, servers: Double, centrals: Double)
        /// Records per message the stream holds at the end (the warm-up's included); nil when no node said.
        let recordsPerMessage: Double?
        /// The stream servers' CPU seconds a second over `idleSeconds` before the first send, every daemon bound.
        let idleServers: Double
    }

    /// How long the fleet is watched idle before each throughput run.
    static let idleSeconds = 5.0

    func runFleet(_ workload: Workload, centrals: Int) throws -> FleetRun {
        FileSystem.syncAll()
        let (fleet, warm) = try newFleet(centrals: centrals)
        let slices = workload.interleaved(into: scale.clients)
        let connections = try slices.enumerated().map { index, slice in
            try PipelinedClient(socketPath: fleet.edgeSockets[index % fleet.edges.count], records: slice)
        }
        let watch = CentralWatch(paths: fleet.centralJournals, recordIDs: false)
        let idleBefore = fleet.cpuSeconds().servers
        usleep(UInt32(Self.idleSeconds * 1_000_000))
        let idleServers = (fleet.cpuSeconds().servers - idleBefore) / Self.idleSeconds
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
            }, idleServers: idleServers)
    }

    func measureThroughput() throws {
        let workload = Workload(returningUsers: scale.throughputUsers, records: scale.throughputRecords)
        let clients = scale.clients
        progress(
            "fleet: \(Format.grouped(Double(workload.count))) returning-user records, \(clients) clients, fleet "
                + "end to end with two central daemons, one daemon, the fleet with one central daemon, alternating, "
                + "\(scale.pairs) rounds")
        var two: [FleetRun] = []
        var one: [FleetRun] = []
        var single: [Double] = []
        var singleCPU: [Double] = []
        for _ in 0..<max(1, scale.pairs) {
            two.append(try runFleet(workload, centrals: 2))
            FileSystem.syncAll()
            let daemon = try DaemonProcess(
                binary: daemonPath, scratch: scratch, databasePath: newDatabase(), label: "fleet-single")
            let cpuBefore = ProcessCPU.seconds(pid: daemon.pid) ?? 0
            single.append(
                try IngestThroughput.measure(
                    workload, clients: clients, socketPath: daemon.socketPath, interleaved: true))
            singleCPU.append((ProcessCPU.seconds(pid: daemon.pid) ?? 0) - cpuBefore)
            try daemon.stop()
            one.append(try runFleet(workload, centrals: 1))
        }
        let runs = { (values: [Double]) in values.map(Format.grouped).joined(separator: ", ") }
        add(
            ResultRow(
                section: Self.section,
                name: "**baseline**: one offertrackd (default, the join kept current), the same records and "
                    + "\(clients) clients",
                value: "\(Format.grouped(PairedRuns.median(single))) records/s, "
                    + "\(Format.fixed(PairedRuns.median(singleCPU) / Double(workload.count) * 1000, 3)) CPU s per 1,000",
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
            let cpuRatio = { (part: (FleetRun) -> Double) in
                Format.ratio(PairedRuns.median(zip(fleetRuns, singleCPU).map { part($0) / max($1, 1e-9) }))
            }
            add(
                ResultRow(
                    section: Self.section,
                    name: "fleet with \(layout): CPU a record against one daemon's, the 3 nats-server nodes / the "
                        + "whole fleet",
                    value: "\(cpuRatio { $0.cpu.servers }) / "
                        + cpuRatio { $0.cpu.edges + $0.cpu.servers + $0.cpu.centrals },
                    comparison: "targets ≤ 0.25× / ≤ 2.3×; medians of the rounds' ratios, each against the same "
                        + "round's daemon"))
            add(
                ResultRow(
                    section: Self.section,
                    name: "fleet with \(layout), idle (every daemon bound, nothing sent): the 3 nats-server nodes' "
                        + "CPU",
                    value: "\(Format.fixed(PairedRuns.median(fleetRuns.map(\.idleServers)) * 100, 1)) % of a core",
                    comparison: "over \(Format.fixed(Self.idleSeconds, 0)) s before each run; runs: "
                        + fleetRuns.map { Format.fixed($0.idleServers * 100, 1) }.joined(separator: ", ")))
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
}
