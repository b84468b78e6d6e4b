import Foundation
import Posix
import Synchronization
import TestSupport

/// Part 3: a whole-stream outage under a steady load, then the drain.
extension FleetSection {
    struct RSSSample {
        let seconds: Double
        let kib: [Int]
    }

    func measureOutage() throws {
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
    func reconcile(_ fleet: FleetUnderTest) throws {
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

    func addOutageRows(
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
