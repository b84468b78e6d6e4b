import AttributionJoin
import Foundation
import Glibc
import JournalStore
import OfferTrackDomain
import Posix
import Simulator
import TestSupport
import WireFormat

/// How big the sealing section is: the full run, or `--smoke` (seconds).
struct SealingScale {
    /// The seal under traffic: records of the one day sealed, and the paced traffic beside it, in rounds of
    /// `roundSeconds` (the first `baselineRounds` before the seal starts, then until it has ended).
    var dayRecords: Int
    var recordsPerSecond: Double
    var clients: Int
    var roundSeconds: Double
    var baselineRounds: Int
    /// The plateau: `SteadyFlowSimulator`'s new users every `cohortDays` days.
    var usersPerCohort: Int
    var cohortDays: Int
    /// Where to write the seal's answers second by second; nil: nowhere.
    var timelinePath: String? = nil

    static let full = SealingScale(
        dayRecords: 1_000_000, recordsPerSecond: 10_000, clients: 8, roundSeconds: 10, baselineRounds: 2,
        usersPerCohort: 8_000, cohortDays: 2)

    static let smoke = SealingScale(
        dayRecords: 12_000, recordsPerSecond: 1_000, clients: 2, roundSeconds: 1, baselineRounds: 1,
        usersPerCohort: 40, cohortDays: 2)
}

/// Section 11, SPEC 12 (issue 47 items 2 and 5): sealed days.
///
/// Under traffic: a journal whose one day, older than R (default windows, R = 33) at the real clock, holds
/// `dayRecords` of `simulate --returning`'s traffic (about six records a user, presentations, checks, conversions,
/// lapses) built in process; the daemon started on it and sent paced records with timestamps of the last day (after
/// the horizon the seal sets: every one must be `accepted`), in rounds; after `baselineRounds` rounds
/// `offertrack seal --as-of NOW` runs to its end as its own process. The answers to the records sent while it ran,
/// beside those sent in the rounds before it (their first third left out: the daemon's first seconds under load
/// are slower); the seal's wall time. The target (SPEC 12 and issue 47): no answer waits more than 250 ms, the
/// export's bound.
///
/// The plateau (`SealingPlateau`): a steady flow sealed nightly, bytes after 4R against 2R days and kept per
/// sealed record.
final class SealingSection {
    static let section = "11 Sealing"
    /// The default windows (W 720 h, F 24 h: K = 31 days) and the smallest R they allow.
    static let dayRules = """
        {"currency":"USD","retentionDays":33,"rules":[{"affiliateToken":"*","amountMinor":500}]}
        """

    private let context: SectionContext
    private let scale: SealingScale
    private let cli: String

    init(context: SectionContext, scale: SealingScale, cli: String) {
        self.context = context
        self.scale = scale
        self.cli = cli
    }

    /// Runs `parts` (`seal`, `plateau`; nil: both).
    func run(parts: Set<String>? = nil) throws {
        if parts?.contains("seal") ?? true { try measureSealUnderTraffic() }
        if parts?.contains("plateau") ?? true { try SealingPlateau(context: context, scale: scale, cli: cli).run() }
    }

    /// The seal of one big day while the daemon takes paced traffic.
    private func measureSealUnderTraffic() throws {
        let rules = try RulesFile(bytes: Array(Self.dayRules.utf8))
        guard let retention = rules.rules.retention else { throw BenchFailure("the sealing rules keep every day") }
        let rulesPath = context.scratch.file("sealing-rules.json")
        try Self.dayRules.write(toFile: rulesPath, atomically: true, encoding: .utf8)
        let asOf = Clock.wallMilliseconds()
        let day = retention.lastSealableDay(asOf: asOf)
        let path = context.newDatabase()
        context.progress(
            "sealing: building a journal of \(Format.grouped(Double(scale.dayRecords))) returning users' records "
                + "on \(Timestamp.formatDay(day * Timestamp.millisecondsPerDay))")
        let built = try buildDay(path: path, day: day, settings: rules.rules.settings)
        FileSystem.syncAll()
        let port = try LoopbackHTTP.freePort()
        let daemon = try context.startDaemon(
            "sealing", path, arguments: ["--rules", rulesPath, "--metrics-listen", "127.0.0.1:\(port)"])
        defer { try? daemon.stop() }
        _ = try daemon.waitForLog(containing: "the join knows every journaled user", timeoutSeconds: 600)
        context.progress(
            "sealing: \(Format.grouped(scale.recordsPerSecond)) records/s over \(scale.clients) connections, the "
                + "seal after \(Format.fixed(Double(scale.baselineRounds) * scale.roundSeconds, 0)) s")
        let outputPath = context.scratch.file("sealing-seal.out")
        let arguments = [
            cli, "seal", "--db", path, "--rules", rulesPath, "--as-of", Timestamp.format(asOf),
        ]
        var seal: SealRun?
        var pausesAtStart = WriterPauses(port: port)
        // A failure leaves no seal running (it would go on with the next section).
        defer { seal?.kill() }
        var samples: [PacedClient.Sample] = []
        let perRound = max(scale.clients, Int(scale.recordsPerSecond * scale.roundSeconds))
        // The simulator's users of the last 24 hours (after the horizon the seal sets: today − 2 here), as many as
        // 30 minutes of rounds can take; one simulation, so that every round's ids are new.
        var source = WorkloadSimulator(
            users: perRound * Int(1_800 / scale.roundSeconds), seed: 1200,
            start: asOf - Timestamp.millisecondsPerDay
        ).makeIterator()
        func traffic() -> Workload {
            var submissions: [Submission] = []
            submissions.reserveCapacity(perRound)
            while submissions.count < perRound, let simulated = source.next() {
                guard !simulated.isDuplicate else { continue }
                submissions.append(Submission(record: simulated.record, line: Array(simulated.line.utf8)))
            }
            return Workload(submissions: submissions)
        }
        var next = traffic()
        var round = 0
        while seal?.ended == nil || round <= scale.baselineRounds {
            guard Double(round) * scale.roundSeconds < 1_800 else {
                throw BenchFailure("offertrack seal still ran after 30 minutes of traffic")
            }
            let records = next
            samples += try AckLatency.samples(
                records.submissions[...], recordsPerSecond: scale.recordsPerSecond, clients: scale.clients,
                socketPath: daemon.socketPath, toleratesUnavailable: true
            ) { firstDue in
                if round == scale.baselineRounds {
                    Stopwatch.sleep(until: firstDue)
                    pausesAtStart = WriterPauses(port: port)
                    seal = try SealRun(arguments, outputPath: outputPath)
                }
                // The next round's records made while this one is paced (the gap between rounds stays short).
                next = traffic()
            }
            round += 1
        }
        let pausesAtEnd = WriterPauses(port: port)
        guard let seal, let ended = seal.ended else { throw BenchFailure("the seal never ran") }
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard seal.status == 0, output.hasPrefix("sealed 1 day") else {
            throw BenchFailure("offertrack seal exited \(seal.status ?? -1): \(output)")
        }
        try daemon.stop()
        let firstSent = samples.map(\.sentAt).min() ?? 0
        let settled = firstSent + UInt64(scale.roundSeconds / 3 * 1e9)
        let before = Window(samples.filter { $0.sentAt >= settled && $0.sentAt < seal.started })
        let sealing = samples.filter { $0.sentAt >= seal.started && $0.sentAt <= ended }
        let during = Window(sealing)
        let sealSeconds = Double(ended - seal.started) / 1e9
        // When the slowest answer was sent, from the seal's start: the counting snapshot, a day's counts, the chunks.
        let slowest = sealing.max { $0.latency < $1.latency }
        let slowestAt = slowest.map { Double($0.sentAt - seal.started) / 1e9 } ?? 0
        let late = Self.lateSeconds(sealing, from: seal.started)
        if let timelinePath = scale.timelinePath {
            try Self.timeline(samples, from: seal.started).write(
                toFile: timelinePath, atomically: true, encoding: .utf8)
        }
        let removed = Self.removedRecords(output)
        let met = during.max <= 250 && during.unavailable == 0 ? "met" : "**missed**"
        context.add(
            ResultRow(
                section: Self.section,
                name: "answers while `offertrack seal` seals a day of \(Format.grouped(Double(built.records))) "
                    + "records (\(Format.grouped(Double(built.users))) returning users), "
                    + "\(Format.grouped(scale.recordsPerSecond)) records/s paced over \(scale.clients) connections: "
                    + "max / p99 / p50",
                value: during.text,
                comparison: "the same traffic before the seal: \(before.text); ratios max "
                    + "\(ratio(during.max, before.max)), p99 \(ratio(during.p99, before.p99)), p50 "
                    + "\(ratio(during.p50, before.p50)); the slowest sent \(Format.fixed(slowestAt, 1)) s into the "
                    + "seal; \(late); target: every answer ≤ 250 ms: \(met)"))
        context.add(
            ResultRow(
                section: Self.section,
                name: "the seal of that day beside the traffic (spawn to exit, R 33 days, default windows)",
                value: "\(Format.fixed(sealSeconds, 1)) s",
                comparison: "removed \(Format.grouped(Double(removed))) records, kept "
                    + "\(Format.grouped(Double(built.records - removed))) as index entries; "
                    + "\(Format.grouped(Double(built.records) / max(sealSeconds, 0.001))) records sealed/s; "
                    + "\(round) rounds of \(Format.fixed(scale.roundSeconds, 0)) s of traffic; "
                    + pausesAtEnd.since(pausesAtStart)))
    }

    /// The answers over 250 ms and the seconds into the seal they were sent in (the eight with most of them), so
    /// that a figure says which of the seal's phases the daemon waited behind.
    private static func lateSeconds(_ samples: [PacedClient.Sample], from start: UInt64) -> String {
        var perSecond: [Int: Int] = [:]
        for sample in samples where sample.latency > 250_000_000 {
            perSecond[Int((sample.sentAt - start) / 1_000_000_000), default: 0] += 1
        }
        let total = perSecond.values.reduce(0, +)
        guard total > 0 else { return "no answer over 250 ms" }
        let worst = perSecond.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(8)
        let seconds = worst.sorted { $0.key < $1.key }.map { "\($0.key) s (\($0.value))" }
        return "\(Format.grouped(Double(total))) answers over 250 ms, sent in seconds "
            + seconds.joined(separator: ", ")
    }

    /// The daemon's pauses for checkpoints so far (`offertrack_checkpoint_writer_pause*`), nil when not scraped.
    private struct WriterPauses {
        var pauses: Double?
        var seconds: Double?

        init(port: UInt16) {
            pauses = MetricsProbe.value("offertrack_checkpoint_writer_pauses_total", port: port)
            seconds = MetricsProbe.value("offertrack_checkpoint_writer_pause_seconds_total", port: port)
        }

        /// The writer's pauses from `start` to these.
        func since(_ start: WriterPauses) -> String {
            guard let pauses, let seconds, let before = start.pauses, let beforeSeconds = start.seconds else {
                return "the writer's pauses for checkpoints not scraped"
            }
            return "the writer paused \(Format.grouped(pauses - before)) times for checkpoints meanwhile, "
                + "\(Format.fixed(seconds - beforeSeconds, 1)) s in all"
        }
    }

    /// Every second of the run from the seal's start (negative before it): answers, the slowest in ms, answers over
    /// 250 ms; tab-separated, one line a second.
    private static func timeline(_ samples: [PacedClient.Sample], from start: UInt64) -> String {
        var perSecond: [Int: (count: Int, max: UInt64, late: Int)] = [:]
        for sample in samples {
            let offset = Int64(sample.sentAt) - Int64(start)
            let second = Int(offset >= 0 ? offset / 1_000_000_000 : (offset + 1) / 1_000_000_000 - 1)
            var entry = perSecond[second] ?? (0, 0, 0)
            entry.count += 1
            entry.max = max(entry.max, sample.latency)
            if sample.latency > 250_000_000 { entry.late += 1 }
            perSecond[second] = entry
        }
        return "second\tanswers\tmax_ms\tover_250ms\n"
            + perSecond.sorted { $0.key < $1.key }.map { second, entry in
                "\(second)\t\(entry.count)\t\(entry.max / 1_000_000)\t\(entry.late)\n"
            }.joined()
    }

    private func ratio(_ value: Double, _ base: Double) -> String { base > 0 ? Format.ratio(value / base) : "n/a" }

    /// The answers of one window: max, p99 and p50 in ms, and how many were `storage_unavailable` (the daemon
    /// could not get the journal's write lock within its busy timeout: the record was not journaled).
    private struct Window {
        let count: Int
        let max: Double
        let p99: Double
        let p50: Double
        let unavailable: Int

        init(_ samples: [PacedClient.Sample]) {
            let sorted = samples.map(\.latency).sorted()
            count = sorted.count
            max = Double(sorted.last ?? 0) / 1e6
            p99 = Percentile.of(sorted, 0.99)
            p50 = Percentile.of(sorted, 0.50)
            unavailable = samples.count(where: \.unavailable)
        }

        var text: String {
            let refused =
                unavailable == 0 ? "" : ", **\(Format.grouped(Double(unavailable))) of them `storage_unavailable`**"
            return "\(Format.fixed(max, 2)) / \(Format.fixed(p99, 2)) / \(Format.fixed(p50, 2)) ms "
                + "(\(Format.grouped(Double(count))) answers\(refused))"
        }
    }

    /// `simulate --returning`'s users on one day (`day`, a UTC day number): the first `dayRecords` of their
    /// records that day, in time order, journaled in process.
    private func buildDay(path: String, day: Int64, settings: AttributionSettings) throws -> (
        records: Int, users: Int
    ) {
        let dayStart = day * Timestamp.millisecondsPerDay
        // About six records a user; a few more users than that, as some of their records fall on the next day.
        let simulator = ReturningUserSimulator(
            users: scale.dayRecords / 5, seed: 47, start: dayStart, days: 1)
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate, settings: settings)
        var batch: [Submission] = []
        batch.reserveCapacity(8192)
        var written = 0
        var users = Set<String>()
        for simulated in simulator where Timestamp.dayNumber(simulated.record.ts) == day {
            guard written + batch.count < scale.dayRecords else { break }
            users.insert(simulated.record.user)
            batch.append(Submission(record: simulated.record, line: Array(simulated.line.utf8)))
            if batch.count == 8192 {
                written += try writer.append(batch, receivedAt: 0).count { $0.isJournaled }
                batch.removeAll(keepingCapacity: true)
            }
        }
        written += try writer.append(batch, receivedAt: 0).count { $0.isJournaled }
        guard written == scale.dayRecords else {
            throw BenchFailure("the simulator gave \(written) of \(scale.dayRecords) records that day")
        }
        return (written, users.count)
    }

    /// The records a seal's output says it removed (`removed N records`).
    static func removedRecords(_ output: String) -> Int {
        guard let range = output.range(of: "removed ") else { return 0 }
        return Int(output[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }
}

/// `offertrack seal` as a child process, waited for on a thread of its own so that its end is timed while the
/// traffic goes on.
final class SealRun: @unchecked Sendable {
    // @unchecked: `child` is touched only by the waiting thread until `ended` is set; the rest is under `lock`.
    private let child: ChildProcess
    private let lock = NSLock()
    private var endedAt: UInt64?
    private var exitStatus: Int32?
    let started: UInt64

    init(_ arguments: [String], outputPath: String) throws {
        started = Stopwatch.now()
        child = try ChildProcess(
            arguments, environment: ["PATH": "/usr/bin:/bin"], stdoutPath: outputPath, stderrPath: outputPath)
        _ = Worker(name: "bench-seal-wait") { [self] in
            let status = child.wait()
            let now = Stopwatch.now()
            lock.withLock {
                endedAt = now
                exitStatus = status
            }
        }
    }

    /// Ends the seal at once if it still runs.
    func kill() {
        if ended == nil { _ = Glibc.kill(child.pid, SIGKILL) }
    }

    /// When the seal exited (`Stopwatch` ns), nil while it runs.
    var ended: UInt64? { lock.withLock { endedAt } }
    var status: Int32? { lock.withLock { exitStatus } }
}
