import Foundation
import OfferTrackDomain
import Posix
import SQLite
import TestSupport

/// The targets the figures are judged against.
extension BenchRun {
    func judgeTargets() {
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
                name: "returning users: daemon CPU a record, 8 clients", goal: "≤ 15 µs (issue 31)",
                measured: (returningCPUMicroseconds.map { "\(Format.fixed($0, 1)) µs" } ?? "–")
                    + (returningRatio.map { "; \(Format.ratio($0)) of plain SQLite in C (`id` only)" } ?? "")
                    + (returningDeferredCeiling.map {
                        " (SQLite in C with the per-user index deferred, no join: \(Format.ratio($0)))"
                    } ?? ""),
                met: judged ? returningCPUMicroseconds.map { $0 <= 15 } : nil))
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
    func judgeHotUserTargets(judged: Bool) {
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
}
