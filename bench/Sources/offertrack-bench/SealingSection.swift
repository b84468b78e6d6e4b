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
    /// Where to write the seal's answers second by second (the control's beside it, `.control` added); nil:
    /// nowhere.
    var timelinePath: String? = nil
    /// How long the control sleeps when the seal is not run in the same bench run (else as long as the seal took).
    var controlSeconds: Double

    static let full = SealingScale(
        dayRecords: 1_000_000, recordsPerSecond: 10_000, clients: 8, roundSeconds: 10, baselineRounds: 2,
        usersPerCohort: 8_000, cohortDays: 2, controlSeconds: 300)

    static let smoke = SealingScale(
        dayRecords: 12_000, recordsPerSecond: 1_000, clients: 2, roundSeconds: 1, baselineRounds: 1,
        usersPerCohort: 40, cohortDays: 2, controlSeconds: 5)
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
/// export's bound. The control: the same again with a sleep as long as the seal in its place (`SealTraffic`), so
/// that the seal reads as ratios against what the machine answers without one, the same run.
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

    /// Runs `parts` (`seal`, `control`, `plateau`; nil: all). The control sleeps as long as the seal took, or
    /// `SealingScale.controlSeconds` when the seal is not run.
    func run(parts: Set<String>? = nil) throws {
        let rules = try RulesFile(bytes: Array(Self.dayRules.utf8))
        let rulesPath = context.scratch.file("sealing-rules.json")
        try Self.dayRules.write(toFile: rulesPath, atomically: true, encoding: .utf8)
        let traffic = SealTraffic(context: context, scale: scale, rules: rules, rulesPath: rulesPath)
        var seal: SealTraffic.Outcome?
        if parts?.contains("seal") ?? true { seal = try measureSealUnderTraffic(traffic) }
        if parts?.contains("control") ?? true { try measureControl(traffic, besideSeal: seal) }
        if parts?.contains("plateau") ?? true { try SealingPlateau(context: context, scale: scale, cli: cli).run() }
    }

    /// The seal of one big day while the daemon takes paced traffic.
    private func measureSealUnderTraffic(_ traffic: SealTraffic) throws -> SealTraffic.Outcome {
        let run = try traffic.run("sealing") { path, asOf in
            [cli, "seal", "--db", path, "--rules", traffic.rulesPath, "--as-of", Timestamp.format(asOf)]
        }
        guard run.status == 0, run.output.hasPrefix("sealed 1 day") else {
            throw BenchFailure("offertrack seal exited \(run.status): \(run.output)")
        }
        let before = Window(run.before(roundSeconds: scale.roundSeconds))
        let sealing = run.during
        let during = Window(sealing)
        // When the slowest answer was sent, from the seal's start: the counting snapshot, a day's counts, the chunks.
        let slowest = sealing.max { $0.latency < $1.latency }
        let slowestAt = slowest.map { Double($0.sentAt - run.started) / 1e9 } ?? 0
        if let timelinePath = scale.timelinePath {
            try Self.timeline(run.samples, from: run.started).write(
                toFile: timelinePath, atomically: true, encoding: .utf8)
        }
        let removed = Self.removedRecords(run.output)
        context.add(
            ResultRow(
                section: Self.section,
                name: "answers while `offertrack seal` seals a day of \(Format.grouped(Double(run.records))) "
                    + "records (\(Format.grouped(Double(run.users))) returning users), "
                    + "\(Format.grouped(scale.recordsPerSecond)) records/s paced over \(scale.clients) connections: "
                    + "max / p99 / p50",
                value: during.text,
                comparison: "the same traffic before the seal: \(before.text); ratios max "
                    + "\(ratio(during.max, before.max)), p99 \(ratio(during.p99, before.p99)), p50 "
                    + "\(ratio(during.p50, before.p50)); the slowest sent \(Format.fixed(slowestAt, 1)) s into the "
                    + "seal; \(Self.lateSeconds(sealing, from: run.started)); target: every answer ≤ 250 ms: "
                    + during.verdict))
        context.add(
            ResultRow(
                section: Self.section,
                name: "the seal of that day beside the traffic (spawn to exit, R 33 days, default windows)",
                value: "\(Format.fixed(run.seconds, 1)) s",
                comparison: "removed \(Format.grouped(Double(removed))) records, kept "
                    + "\(Format.grouped(Double(run.records - removed))) as index entries; "
                    + "\(Format.grouped(Double(run.records) / max(run.seconds, 0.001))) records sealed/s; "
                    + "\(run.rounds) rounds of \(Format.fixed(scale.roundSeconds, 0)) s of traffic; \(run.counters)"))
        return run
    }

    /// The control: the same traffic on a journal built alike, with a sleep as long as the seal in its place, so
    /// that the seal's figures read against what this machine answers without one (the same run).
    private func measureControl(_ traffic: SealTraffic, besideSeal seal: SealTraffic.Outcome?) throws {
        let seconds = Int((seal?.seconds ?? scale.controlSeconds).rounded(.up))
        let run = try traffic.run("sealing-control") { _, _ in ["/bin/sleep", "\(seconds)"] }
        guard run.status == 0 else { throw BenchFailure("the control's sleep exited \(run.status): \(run.output)") }
        if let timelinePath = scale.timelinePath {
            try Self.timeline(run.samples, from: run.started).write(
                toFile: timelinePath + ".control", atomically: true, encoding: .utf8)
        }
        let control = Window(run.during)
        var comparison = "\(Self.lateSeconds(run.during, from: run.started)); target: every answer ≤ 250 ms: "
        comparison += control.verdict + "; " + run.counters
        if let seal {
            let sealing = Window(seal.during)
            comparison +=
                "; beside the seal: \(Self.slowSeconds(seal.during, from: seal.started)) against "
                + "\(Self.slowSeconds(run.during, from: run.started)) here, ratios max "
                + "\(ratio(sealing.max, control.max)), p99 \(ratio(sealing.p99, control.p99)), p50 "
                + "\(ratio(sealing.p50, control.p50))"
        }
        context.add(
            ResultRow(
                section: Self.section,
                name: "the same traffic with no seal (a journal built alike, a sleep of \(seconds) s in the seal's "
                    + "place; the control of the same run): max / p99 / p50",
                value: control.text, comparison: comparison))
    }

    /// The answers over 250 ms and the seconds into the command they were sent in (the eight with most of them), so
    /// that a figure says which of the seal's phases the daemon waited behind.
    private static func lateSeconds(_ samples: [PacedClient.Sample], from start: UInt64) -> String {
        let perSecond = lateAnswersPerSecond(samples, from: start)
        let total = perSecond.values.reduce(0, +)
        guard total > 0 else { return "no answer over 250 ms" }
        let worst = perSecond.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(8)
        let seconds = worst.sorted { $0.key < $1.key }.map { "\($0.key) s (\($0.value))" }
        return "\(Format.grouped(Double(total))) answers over 250 ms in \(slowSeconds(samples, from: start)), "
            + "the most in seconds " + seconds.joined(separator: ", ")
    }

    /// How many of the seconds the samples were sent in had an answer over 250 ms: "K of S seconds".
    private static func slowSeconds(_ samples: [PacedClient.Sample], from start: UInt64) -> String {
        let seconds = Set(secondsFrom(start, samples).map(\.second)).count
        return "\(lateAnswersPerSecond(samples, from: start).count) of \(seconds) seconds"
    }

    /// The answers over 250 ms of each second from `start`.
    private static func lateAnswersPerSecond(_ samples: [PacedClient.Sample], from start: UInt64) -> [UInt64: Int] {
        var perSecond: [UInt64: Int] = [:]
        for (second, sample) in secondsFrom(start, samples) where sample.latency > 250_000_000 {
            perSecond[second, default: 0] += 1
        }
        return perSecond
    }

    /// The samples sent from `start` on, each with the second of the run it was sent in (those sent before are left
    /// out).
    private static func secondsFrom(_ start: UInt64, _ samples: [PacedClient.Sample]) -> [(
        second: UInt64, sample: PacedClient.Sample
    )] {
        samples.filter { $0.sentAt >= start }.map { (($0.sentAt - start) / 1_000_000_000, $0) }
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

        /// Whether every answer met SPEC 12's bound (≤ 250 ms, none refused).
        var verdict: String { max <= 250 && unavailable == 0 ? "met" : "**missed**" }

        var text: String {
            let refused =
                unavailable == 0 ? "" : ", **\(Format.grouped(Double(unavailable))) of them `storage_unavailable`**"
            return "\(Format.fixed(max, 2)) / \(Format.fixed(p99, 2)) / \(Format.fixed(p50, 2)) ms "
                + "(\(Format.grouped(Double(count))) answers\(refused))"
        }
    }

    /// The records a seal's output says it removed (`removed N records`).
    static func removedRecords(_ output: String) -> Int {
        guard let range = output.range(of: "removed ") else { return 0 }
        return Int(output[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }
}
