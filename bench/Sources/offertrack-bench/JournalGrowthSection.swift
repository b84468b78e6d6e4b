import AttributionJoin
import Foundation
import JournalStore
import OfferTrackDomain
import Posix
import Simulator
import TestSupport

/// How big the growth comparison is: the full run, or `--smoke` (seconds).
struct JournalGrowthScale {
    /// The users every journal and the timed records share.
    var users: Int
    /// The journals' sizes in records, smallest first; each larger one continues the smaller one's records.
    var journals: [Int]
    /// The returning records timed after each journal.
    var timedRecords: Int
    var rounds: Int
    var clients: Int

    static let full = JournalGrowthScale(
        users: 50_000, journals: [100_000, 10_000_000], timedRecords: 300_000, rounds: 2, clients: 8)
    static let smoke = JournalGrowthScale(
        users: 300, journals: [600, 6_000], timedRecords: 1_000, rounds: 1, clients: 4)
}

/// Section 10, issue 47 item 4: the same returning records after a small and a very large journal of the same
/// users, beside SQLite in C with the journal's integer per-user index after the same fills.
///
/// The users are `simulate --returning`'s, coming back every 60 days (each period one `ReturningUserSimulator` run
/// of the same seed, about 6.3 records a user), for as many periods as the largest journal needs: 10,000,000
/// records of 50,000 users are some 200 records a user over five years. Each journal is the first N of those
/// records, appended in process (`JournalWriter`, durability normal, the join kept as the daemon keeps it,
/// `fillBatch` records a transaction), its writer closed as a daemon's at a clean stop (saving its summaries of
/// returning users, `SavedSummaries`, which each round's daemon takes when it starts); the C
/// baseline's databases get the same records, in transactions of 8,192 rows. The timed records are the period
/// after the last, the same for every journal. Each round copies each journal, restarts the daemon on it, waits
/// until the join knows every journaled user, and pipelines the timed records over `clients` connections (the
/// daemon's CPU from `/proc/PID/stat`), then copies the C database and runs the C baseline on the same records
/// (its whole process's CPU, reading the file included), 1,000 rows a transaction.
final class JournalGrowthSection {
    static let section = "10 Journal size"
    private static let periodDays = 60
    /// Records a fill appends a transaction. Each commit moves a slice of the users' recent index entries to the
    /// main level, so the more records a transaction, the more of a user's entries share a page written: with
    /// 8,192 the fill of 10,000,000 records wrote about 2,600 records/s once past 1,000,000 (over an hour).
    static let fillBatch = 65_536

    private let context: SectionContext
    private let scale: JournalGrowthScale
    private let peers: String?
    /// A folder keeping the filled journals between runs (`--growth-keep`); nil: every run fills its own.
    private let keep: String?

    init(context: SectionContext, scale: JournalGrowthScale, peers: String?, keep: String? = nil) {
        self.context = context
        self.scale = scale
        self.peers = peers
        self.keep = keep
    }

    /// One size: the daemon's journal and the C baseline's database holding its records.
    private struct Subject {
        let size: Int
        let journal: String
        let baseline: String?
        let journalBytes: Int
        let averageHistory: Double
    }

    private struct Timed {
        var daemonRate: [Double] = []
        var daemonCPU: [Double] = []
        var daemonWritten: [Double] = []
        var daemonRead: [Double] = []
        var baselineCPU: [Double] = []
        var baselineRate: [Double] = []
    }

    func run() throws {
        let sizes = Set(scale.journals).sorted()
        guard let largest = sizes.last else { return }
        let periods = try fillPeriods(records: largest)
        let timed = Workload(
            returningUsers: scale.users, records: scale.timedRecords,
            start: WorkloadSimulator.defaultStart + Int64(periods * Self.periodDays) * Timestamp.millisecondsPerDay,
            days: Self.periodDays)
        let timedFile = context.scratch.file("growth-timed.ndjson")
        try Data(timed.ndjson).write(to: URL(fileURLWithPath: timedFile))
        let subjects: [Subject]
        if let kept = keptSubjects(sizes: sizes) {
            context.progress("journal growth: reusing the journals kept in \(keep ?? "")")
            subjects = kept
        } else {
            let built = try build(sizes: sizes, periods: periods, timedIDs: Set(timed.submissions.map(\.record.id)))
            subjects = try keepSubjects(built)
        }
        var results: [Int: Timed] = [:]
        for round in 1...max(1, scale.rounds) {
            for subject in subjects {
                context.progress(
                    "journal growth: round \(round), \(Format.grouped(Double(timed.count))) returning records after "
                        + "\(Format.grouped(Double(subject.size)))")
                try time(subject, timed: timed, timedFile: timedFile, into: &results[subject.size, default: Timed()])
            }
        }
        for subject in subjects where keep == nil {
            context.scratch.removeDatabase(subject.journal)
            if let baseline = subject.baseline { context.scratch.removeDatabase(baseline) }
        }
        report(subjects, results, timedCount: timed.count)
    }

    /// How many 60-day periods of the users' visits give at least `records` records.
    private func fillPeriods(records: Int) throws -> Int {
        let perPeriod = ReturningUserSimulator(users: scale.users, seed: 1, days: Self.periodDays).reduce(0) { n, _ in
            n + 1
        }
        guard perPeriod > 0 else { throw BenchFailure("journal growth: the simulator made no records") }
        return (records + perPeriod - 1) / perPeriod
    }

    /// Builds every size's journal and C database, each continuing the one before it (a copy of it).
    private func build(sizes: [Int], periods: Int, timedIDs: Set<String>) throws -> [Subject] {
        var subjects: [Subject] = []
        var journal = context.newDatabase()
        var baseline = peers.map { _ in context.newDatabase() }
        var writer: JournalWriter? = try JournalWriter(path: journal, durability: .normal, schema: .migrate)
        var written = 0
        var history: [String: Int] = [:]
        var pendingLines: [UInt8] = []
        var sizeIndex = 0
        var batch: [Submission] = []
        batch.reserveCapacity(Self.fillBatch)
        let start = Stopwatch.now()
        periodLoop: for period in 0..<periods {
            let records = ReturningUserSimulator(
                users: scale.users, seed: 1,
                start: WorkloadSimulator.defaultStart + Int64(period * Self.periodDays) * Timestamp.millisecondsPerDay,
                days: Self.periodDays)
            for simulated in records {
                if timedIDs.contains(simulated.record.id) {
                    throw BenchFailure("journal growth: timed record \(simulated.record.id) is in a journal already")
                }
                batch.append(Submission(record: simulated.record, line: Array(simulated.line.utf8)))
                history[simulated.record.user, default: 0] += 1
                pendingLines += simulated.line.utf8
                pendingLines.append(0x0A)
                if batch.count == Self.fillBatch || written + batch.count == sizes[sizeIndex] {
                    try append(batch, to: writer)
                    written += batch.count
                    batch.removeAll(keepingCapacity: true)
                    if let baseline, pendingLines.count > 64 << 20 || written == sizes[sizeIndex] {
                        try fillBaseline(baseline, lines: &pendingLines)
                    }
                    if written % 1_048_576 < Self.fillBatch {
                        context.progress(
                            "journal growth: \(Format.grouped(Double(written))) records journaled, "
                                + "\(Format.fixed(Stopwatch.seconds(since: start), 0)) s")
                    }
                }
                guard written == sizes[sizeIndex] else { continue }
                // One size is complete: close it, keep it, and continue on a copy.
                writer?.close()
                writer = nil
                let historySum = history.values.reduce(0, +)
                subjects.append(
                    Subject(
                        size: written, journal: journal, baseline: baseline,
                        journalBytes: Self.fileBytes(journal),
                        averageHistory: Double(historySum) / Double(max(1, history.count))))
                sizeIndex += 1
                guard sizeIndex < sizes.count else { break periodLoop }
                let next = context.newDatabase()
                try SectionContext.copyJournal(journal, to: next)
                journal = next
                if let current = baseline {
                    let nextBaseline = context.newDatabase()
                    try SectionContext.copyJournal(current, to: nextBaseline)
                    baseline = nextBaseline
                }
                writer = try JournalWriter(path: journal, durability: .normal, schema: .migrate)
            }
        }
        guard subjects.count == sizes.count else {
            throw BenchFailure("journal growth: \(periods) periods gave \(written) records, short of \(sizes)")
        }
        return subjects
    }

    /// What names a kept fill: the same users, sizes, fill batch, C baseline (or none), schema version and rules of
    /// the per-user index's two levels give the same files; a change to either of the last two fills again.
    private func keptFillName(_ size: Int) -> String {
        "growth-\(scale.users)u-\(size)r-\(Self.fillBatch)b-\(peers == nil ? "noc" : "c")"
            + "-schema\(Schema.currentVersion)-\(UserKeys.layoutName)"
    }

    /// The journals a run with `--growth-keep` left, when every size is there; nil otherwise. A kept fill is trusted
    /// as it is: after a change to the simulator or to how the writer lays the journal out beyond its schema and the
    /// two levels' rules, empty the folder.
    private func keptSubjects(sizes: [Int]) -> [Subject]? {
        guard let keep else { return nil }
        var subjects: [Subject] = []
        for size in sizes {
            let base = "\(keep)/\(keptFillName(size))"
            guard let facts = try? String(contentsOfFile: base + ".facts", encoding: .utf8),
                let history = Double(facts.trimmingCharacters(in: .whitespacesAndNewlines))
            else { return nil }
            subjects.append(
                Subject(
                    size: size, journal: base + ".journal", baseline: peers == nil ? nil : base + ".c",
                    journalBytes: Self.fileBytes(base + ".journal"), averageHistory: history))
        }
        return subjects
    }

    /// Moves the built journals into the `--growth-keep` folder (the facts file last, so a run killed while moving
    /// leaves no kept fill that looks complete); without the option, returns them as they are.
    private func keepSubjects(_ built: [Subject]) throws -> [Subject] {
        guard let keep else { return built }
        try FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
        return try built.map { subject in
            let base = "\(keep)/\(keptFillName(subject.size))"
            for file in [base + ".journal", base + ".journal-wal", base + ".c", base + ".c-wal", base + ".facts"] {
                try? FileManager.default.removeItem(atPath: file)
            }
            try Self.moveDatabase(subject.journal, to: base + ".journal")
            if let baseline = subject.baseline { try Self.moveDatabase(baseline, to: base + ".c") }
            try "\(subject.averageHistory)\n".write(toFile: base + ".facts", atomically: true, encoding: .utf8)
            context.scratch.removeDatabase(subject.journal)
            if let baseline = subject.baseline { context.scratch.removeDatabase(baseline) }
            return Subject(
                size: subject.size, journal: base + ".journal", baseline: subject.baseline.map { _ in base + ".c" },
                journalBytes: subject.journalBytes, averageHistory: subject.averageHistory)
        }
    }

    /// Moves a closed database (and its WAL, if one is left) to `destination`: a rename on the same file system,
    /// a copy otherwise.
    private static func moveDatabase(_ source: String, to destination: String) throws {
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: source + suffix) {
            try FileManager.default.moveItem(atPath: source + suffix, toPath: destination + suffix)
        }
    }

    private func append(_ batch: [Submission], to writer: JournalWriter?) throws {
        guard let writer, !batch.isEmpty else { return }
        let outcomes = try writer.append(batch, receivedAt: batch[batch.count - 1].record.ts)
        guard outcomes.allSatisfy({ if case .accepted = $0 { true } else { false } }) else {
            throw BenchFailure("journal growth: a filled record was not accepted (an id the simulator repeated)")
        }
    }

    /// Appends `lines` to the C baseline's database through `sqlite-baseline` (8,192 rows a transaction).
    private func fillBaseline(_ database: String, lines: inout [UInt8]) throws {
        guard let peers, !lines.isEmpty else { return }
        let file = context.scratch.file("growth-fill.ndjson")
        try Data(lines).write(to: URL(fileURLWithPath: file))
        lines.removeAll(keepingCapacity: true)
        _ = try Returning.rate("\(peers)/sqlite-baseline", [file, database, "8192", "integer"])
        try? FileManager.default.removeItem(atPath: file)
    }

    /// One round of `subject`: the daemon on a copy of its journal, then the C baseline on a copy of its database.
    private func time(_ subject: Subject, timed: Workload, timedFile: String, into result: inout Timed) throws {
        let cost = try context.timeOnACopy(
            of: subject.journal, label: "growth-\(subject.size)", workload: timed, clients: scale.clients,
            learningSeconds: 1800)
        let count = Double(timed.count)
        result.daemonRate.append(cost.rate)
        result.daemonCPU.append(cost.cpuMicroseconds)
        result.daemonWritten.append(cost.writtenBytes)
        result.daemonRead.append(cost.readBytes)
        guard let peers, let baseline = subject.baseline else { return }
        let copy = context.newDatabase()
        try SectionContext.copyJournal(baseline, to: copy)
        FileSystem.syncAll()
        let c = try Returning.rateAndCPU("\(peers)/sqlite-baseline", [timedFile, copy, "1000", "integer"])
        context.scratch.removeDatabase(copy)
        result.baselineRate.append(c.rate)
        result.baselineCPU.append(c.cpuSeconds * 1e6 / count)
    }

    private func report(_ subjects: [Subject], _ results: [Int: Timed], timedCount: Int) {
        let median = { (values: [Double]) in values.isEmpty ? 0 : PairedRuns.median(values) }
        let runs = { (values: [Double]) in values.map { Format.fixed($0, 1) }.joined(separator: ", ") }
        for subject in subjects {
            guard let timed = results[subject.size] else { continue }
            let daemon = median(timed.daemonCPU)
            let c = median(timed.baselineCPU)
            context.add(
                ResultRow(
                    section: Self.section,
                    name: "\(Format.grouped(Double(timedCount))) returning records after a journal of "
                        + "\(Format.grouped(Double(subject.size))) records of the same "
                        + "\(Format.grouped(Double(scale.users))) users (\(Format.fixed(subject.averageHistory, 1)) "
                        + "a user; \(Format.grouped(Double(subject.journalBytes / 1_048_576))) MiB), "
                        + "\(scale.clients) clients",
                    value: "\(Format.grouped(median(timed.daemonRate))) records/s, \(Format.fixed(daemon, 1)) µs "
                        + "daemon CPU a record (\(runs(timed.daemonCPU))), "
                        + "\(Format.grouped(median(timed.daemonWritten))) bytes written and "
                        + "\(Format.grouped(median(timed.daemonRead))) read a record",
                    comparison: timed.baselineCPU.isEmpty
                        ? "no C baseline (no peers)"
                        : "C, integer per-user index, same fill: \(Format.fixed(c, 1)) µs a row "
                            + "(\(runs(timed.baselineCPU))), \(Format.grouped(median(timed.baselineRate))) rows/s; "
                            + "daemon against C: \(Format.ratio(c > 0 ? daemon / c : 0))"))
        }
        guard let small = subjects.first, let large = subjects.last, small.size != large.size,
            let smallRuns = results[small.size], let largeRuns = results[large.size]
        else { return }
        let grow = { (values: (Timed) -> [Double]) -> String in
            let before = median(values(smallRuns))
            let after = median(values(largeRuns))
            return before > 0 ? Format.ratio(after / before) : "–"
        }
        context.add(
            ResultRow(
                section: Self.section,
                name: "CPU a returning record after \(Format.grouped(Double(large.size))) records against after "
                    + "\(Format.grouped(Double(small.size))) (same users)",
                value: "daemon \(grow(\.daemonCPU)), C \(grow(\.baselineCPU))",
                comparison: "targets (issue 47): daemon ≤ 1.5×, and daemon ≤ 2.5× C at the larger size"))
    }

    private static func fileBytes(_ path: String) -> Int {
        ["", "-wal"].reduce(0) { total, suffix in
            let size = (try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? Int) ?? nil
            return total + (size ?? 0)
        }
    }
}
