import Foundation
import JournalStore
import OfferTrackDomain
import Posix
import Simulator
import TestSupport

/// How big the journal-size section is: the full run, or `--smoke` (seconds).
struct JournalSizeScale {
    /// The journals' sizes in records, and at most how many returning records are timed after each.
    var journals: [Int]
    var timedRecords: Int
    /// Rounds over the journals (each round times every journal once, on a fresh copy of it).
    var rounds: Int
    var clients: Int

    static let full = JournalSizeScale(
        journals: [20_000, 100_000, 1_000_000], timedRecords: 40_000, rounds: 5, clients: 8)
    static let smoke = JournalSizeScale(journals: [1_000, 4_000], timedRecords: 500, rounds: 1, clients: 4)
}

/// Section 10: what a returning user's record costs against the size of the journal it lands in (the
/// standard: cost must not grow with history; measured from 20,000 to 1,000,000 records).
///
/// Each journal is `simulate --returning` over 60 days for as many users as give its size (about 6.3 records a
/// user), sent through the daemon. The records timed after it are its users coming back 120 days on (the same
/// simulation started later: the same users, new record ids), the first `timedRecords` of them in time order,
/// dealt round-robin over `clients` connections: returning users spread over the whole journal, as real traffic
/// on a journal of that size is. (The smallest journal's users have fewer records than that in those 60 days, so
/// its timed records are all of them, and their earlier records a few more on average: the row says how many.)
/// Each round copies each journal, restarts the daemon on it, waits until the join knows every journaled user,
/// and pipelines the timed records; it reads the daemon's CPU (`/proc/PID/stat`) and bytes read and written
/// (`rchar`/`wchar` of `/proc/PID/io`: the writer's WAL and database reads, the checkpoints) from just before the
/// first send to the last answer.
final class JournalSizeSection {
    static let section = "10 Journal size"

    private let context: SectionContext
    private let scale: JournalSizeScale

    init(context: SectionContext, scale: JournalSizeScale) {
        self.context = context
        self.scale = scale
    }

    /// One journal to time against: its copy to start from, and the records timed after it.
    private struct Subject {
        let size: Int
        let users: Int
        let template: String
        let timed: Workload
        /// The timed records' average count of earlier records of their user (journal and timed records before).
        let priorHistory: Double
    }

    /// One timed run.
    private typealias Timed = SectionContext.DaemonCost

    func run() throws {
        let subjects = try Set(scale.journals).sorted().map { try build(size: $0) }
        var runs: [Int: [Timed]] = [:]
        for round in 1...max(1, scale.rounds) {
            for subject in subjects {
                context.progress(
                    "journal size: round \(round), \(Format.grouped(Double(subject.timed.count))) returning records "
                        + "after \(Format.grouped(Double(subject.size)))")
                runs[subject.size, default: []].append(try time(subject))
            }
        }
        for subject in subjects { context.scratch.removeDatabase(subject.template) }
        report(subjects, runs)
    }

    /// Simulates and journals `size` records (through a daemon, `clients` connections) of `users(size)` users.
    private func build(size: Int) throws -> Subject {
        let users = Self.users(size)
        let timed = Self.timedRecords(users: users, atMost: scale.timedRecords)
        context.progress(
            "journal size: building a journal of \(Format.grouped(Double(size))) records of \(users) users")
        let journal = Workload(returningUsers: users, records: size, days: 60)
        let journaledIDs = Set(journal.submissions.map(\.record.id))
        if let clash = timed.submissions.first(where: { journaledIDs.contains($0.record.id) }) {
            throw BenchFailure("journal size: timed record \(clash.record.id) is in the journal already")
        }
        var history: [String: Int] = [:]
        for submission in journal.submissions { history[submission.record.user, default: 0] += 1 }
        var prior = 0
        for submission in timed.submissions {
            prior += history[submission.record.user, default: 0]
            history[submission.record.user, default: 0] += 1
        }
        let path = context.newDatabase()
        let daemon = try context.startDaemon("size-build", path)
        _ = try IngestThroughput.measure(journal, clients: scale.clients, socketPath: daemon.socketPath)
        try daemon.stop()
        return Subject(
            size: journal.count, users: users, template: path, timed: timed,
            priorHistory: Double(prior) / Double(max(1, timed.count)))
    }

    /// Users simulated for a journal of `size` records: `simulate --returning` gives about 6.3 records a user, so
    /// a few more than `size`, the last of which are left out.
    private static func users(_ size: Int) -> Int { max(1, size / 6) }

    /// The records timed after a journal of `users` users: the same users coming back 120 days on, the first
    /// `count` of their records of those 60 days.
    private static func timedRecords(users: Int, atMost count: Int) -> Workload {
        Workload(
            returningUsers: users, records: count,
            start: WorkloadSimulator.defaultStart + 120 * Timestamp.millisecondsPerDay, days: 60)
    }

    /// One run of `subject`'s timed records on a fresh copy of its journal.
    private func time(_ subject: Subject) throws -> Timed {
        try context.timeOnACopy(
            of: subject.template, label: "size-\(subject.size)", workload: subject.timed, clients: scale.clients,
            learningSeconds: 600)
    }

    private func report(_ subjects: [Subject], _ runs: [Int: [Timed]]) {
        let median = { (values: [Double]) in PairedRuns.median(values) }
        var cpuBySize: [Int: Double] = [:]
        for subject in subjects {
            guard let timed = runs[subject.size] else { continue }
            let cpu = median(timed.map(\.cpuMicroseconds))
            cpuBySize[subject.size] = cpu
            context.add(
                ResultRow(
                    section: Self.section,
                    name: "\(Format.grouped(Double(subject.timed.count))) returning records after a journal of "
                        + "\(Format.grouped(Double(subject.size))) records (\(Format.grouped(Double(subject.users))) "
                        + "users), \(scale.clients) clients",
                    value: "\(Format.grouped(median(timed.map(\.rate)))) records/s, "
                        + "\(Format.fixed(cpu, 1)) µs daemon CPU a record, "
                        + "\(Format.grouped(median(timed.map(\.writtenBytes)))) bytes written and "
                        + "\(Format.grouped(median(timed.map(\.readBytes)))) read a record",
                    comparison: "medians of \(timed.count) (µs "
                        + timed.map { Format.fixed($0.cpuMicroseconds, 1) }.joined(separator: ", ")
                        + "); each timed record's user had \(Format.fixed(subject.priorHistory, 1)) earlier records "
                        + "on average; CPU from /proc/PID/stat (10 ms ticks), bytes rchar/wchar of /proc/PID/io"))
        }
        guard let smallest = subjects.first, let largest = subjects.last, smallest.size != largest.size,
            let small = cpuBySize[smallest.size], let large = cpuBySize[largest.size]
        else { return }
        context.add(
            ResultRow(
                section: Self.section,
                name: "daemon CPU a returning record, journal of \(Format.grouped(Double(largest.size))) against "
                    + "\(Format.grouped(Double(smallest.size))) records",
                value: small > 0 && large > 0 ? Format.ratio(large / small) : "– (under one clock tick)",
                comparison: "the standard: a record's cost must not grow with the journal's size"))
    }
}

/// Bytes a process read and wrote through system calls so far (`rchar`, `wchar` of `/proc/PID/io`).
struct ProcessIO {
    let readBytes: Int
    let writtenBytes: Int

    static func read(pid: Int32) throws -> ProcessIO {
        let path = "/proc/\(pid)/io"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw BenchFailure("cannot read \(path)")
        }
        var values: [Substring: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":")
            if parts.count == 2, let value = Int(parts[1].trimmingCharacters(in: .whitespaces)) {
                values[parts[0]] = value
            }
        }
        guard let read = values["rchar"], let written = values["wchar"] else {
            throw BenchFailure("\(path) has no rchar/wchar")
        }
        return ProcessIO(readBytes: read, writtenBytes: written)
    }
}
