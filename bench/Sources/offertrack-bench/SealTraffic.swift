import AttributionJoin
import Foundation
import Glibc
import JournalStore
import OfferTrackDomain
import Posix
import Simulator
import TestSupport
import WireFormat

/// Paced traffic beside one command, on a daemon started on a journal whose one day, older than R at the real clock,
/// holds `scale.dayRecords` of `simulate --returning`'s traffic: the seal (`offertrack seal --as-of NOW`), or, for
/// the control, a sleep as long as the seal took, so that the same traffic on the same journal says what the
/// machine answers without one.
struct SealTraffic {
    /// What one run measured.
    struct Outcome {
        /// Every answer of the run, the rounds before the command included.
        var samples: [PacedClient.Sample]
        /// The command's spawn and exit (`Stopwatch` ns), its status and output.
        var started: UInt64
        var ended: UInt64
        var status: Int32
        var output: String
        var rounds: Int
        /// The day built: its records and users.
        var records: Int
        var users: Int
        /// What the daemon's counters say of the time since the command started: the writer's pauses for
        /// checkpoints, the WAL emptied for erasures, bytes written and read a record, answers and commits over
        /// 256 ms, and the writer's time as shares.
        var counters: String

        /// The answers to records sent while the command ran.
        var during: [PacedClient.Sample] { samples.filter { $0.sentAt >= started && $0.sentAt <= ended } }
        /// Those sent in the rounds before it, their first third of a round left out (the daemon's first seconds
        /// under load are slower).
        func before(roundSeconds: Double) -> [PacedClient.Sample] {
            let settled = (samples.map(\.sentAt).min() ?? 0) + UInt64(roundSeconds / 3 * 1e9)
            return samples.filter { $0.sentAt >= settled && $0.sentAt < started }
        }
        var seconds: Double { Double(ended - started) / 1e9 }
    }

    let context: SectionContext
    let scale: SealingScale
    let rules: RulesFile
    let rulesPath: String

    /// Builds the day, starts the daemon (`label`) and sends the traffic; after `scale.baselineRounds` rounds runs
    /// `command(journalPath, asOf)` to its end, the rounds going on until it has ended.
    func run(_ label: String, command: (String, Int64) -> [String]) throws -> Outcome {
        guard let retention = rules.rules.retention else { throw BenchFailure("the sealing rules keep every day") }
        let asOf = Clock.wallMilliseconds()
        let day = retention.lastSealableDay(asOf: asOf)
        let path = context.newDatabase()
        context.progress(
            "\(label): building a journal of \(Format.grouped(Double(scale.dayRecords))) returning users' records "
                + "on \(Timestamp.formatDay(day * Timestamp.millisecondsPerDay))")
        let built = try buildDay(path: path, day: day)
        FileSystem.syncAll()
        let port = try LoopbackHTTP.freePort()
        let daemon = try context.startDaemon(
            label, path, arguments: ["--rules", rulesPath, "--metrics-listen", "127.0.0.1:\(port)"])
        defer { try? daemon.stop() }
        _ = try daemon.waitForLog(containing: "the join knows every journaled user", timeoutSeconds: 600)
        context.progress(
            "\(label): \(Format.grouped(scale.recordsPerSecond)) records/s over \(scale.clients) connections, the "
                + "command after \(Format.fixed(Double(scale.baselineRounds) * scale.roundSeconds, 0)) s")
        let outputPath = context.scratch.file("\(label).out")
        var child: SealRun?
        var countersAtStart = DaemonCounters(port: port, pid: daemon.pid)
        // A failure leaves no command running (it would go on with the next section).
        defer { child?.kill() }
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
        while child?.ended == nil || round <= scale.baselineRounds {
            guard Double(round) * scale.roundSeconds < 1_800 else {
                throw BenchFailure("\(label): the command still ran after 30 minutes of traffic")
            }
            let records = next
            samples += try AckLatency.samples(
                records.submissions[...], recordsPerSecond: scale.recordsPerSecond, clients: scale.clients,
                socketPath: daemon.socketPath, toleratesUnavailable: true
            ) { firstDue in
                if round == scale.baselineRounds {
                    Stopwatch.sleep(until: firstDue)
                    countersAtStart = DaemonCounters(port: port, pid: daemon.pid)
                    child = try SealRun(command(path, asOf), outputPath: outputPath)
                }
                // The next round's records made while this one is paced (the gap between rounds stays short).
                next = traffic()
            }
            round += 1
        }
        guard let child, let ended = child.ended else { throw BenchFailure("\(label): the command never ran") }
        let sentMeanwhile = samples.count { $0.sentAt >= child.started }
        let counters = DaemonCounters(port: port, pid: daemon.pid).since(countersAtStart, recordsSent: sentMeanwhile)
        try daemon.stop()
        return Outcome(
            samples: samples, started: child.started, ended: ended, status: child.status ?? -1,
            output: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "", rounds: round,
            records: built.records, users: built.users, counters: counters)
    }

    /// `simulate --returning`'s users on one day (`day`, a UTC day number): the first `dayRecords` of their
    /// records that day, in time order, journaled in process.
    private func buildDay(path: String, day: Int64) throws -> (records: Int, users: Int) {
        let dayStart = day * Timestamp.millisecondsPerDay
        // About six records a user; a few more users than that, as some of their records fall on the next day.
        let simulator = ReturningUserSimulator(
            users: scale.dayRecords / 5, seed: 47, start: dayStart, days: 1)
        let writer = try JournalWriter(
            path: path, durability: .normal, schema: .migrate, settings: rules.rules.settings)
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

    /// The daemon's pauses for checkpoints so far (`offertrack_checkpoint_writer_pause*`), its WAL emptied for
    /// erasures (`offertrack_checkpoint_erasure_truncates_total`), nil when not scraped, and the bytes it read and
    /// wrote (`/proc/PID/io`: the WAL, the checkpoints, the erased bytes' sweep), nil when not readable.
    private struct DaemonCounters {
        var pauses: Double?
        var seconds: Double?
        var erasureTruncates: Double?
        var io: ProcessIO?
        /// The daemon's own count of answers (a line read to its answer queued) and of commits, in all and within
        /// 256 ms (the histograms' bound nearest the target's 250 ms); of the commits' `COMMIT` statements and of the
        /// writer's pauses, in all and within 128 ms (either that long leaves a waiting record half its budget).
        var answers: Tally?
        var commits: Tally?
        var commitStatements: Tally?
        var writerPauses: Tally?
        /// When these were scraped (`Stopwatch` ns): the writer's time is given as shares of the time between two.
        var scrapedAt: UInt64

        /// Every value from one scrape, so that a histogram's count and bucket are of the same moment.
        init(port: UInt16, pid: Int32) {
            scrapedAt = Stopwatch.now()
            let scrape = MetricsProbe.scrape(port: port)
            pauses = scrape?.value("offertrack_checkpoint_writer_pauses_total")
            seconds = scrape?.value("offertrack_checkpoint_writer_pause_seconds_total")
            erasureTruncates = scrape?.value("offertrack_checkpoint_erasure_truncates_total")
            io = try? ProcessIO.read(pid: pid)
            answers = scrape.flatMap { Tally("offertrack_ack_latency_seconds", within: "0.256", in: $0) }
            commits = scrape.flatMap { Tally("offertrack_commit_seconds", within: "0.256", in: $0) }
            commitStatements = scrape.flatMap { Tally("offertrack_commit_statement_seconds", within: "0.128", in: $0) }
            writerPauses = scrape.flatMap { Tally("offertrack_writer_pause_seconds", within: "0.128", in: $0) }
        }

        /// The writer's pauses, the WAL's truncations for erasures, the daemon's bytes a record of the `recordsSent`
        /// meanwhile, and its answers and commits over 256 ms, from `start` to these.
        func since(_ start: DaemonCounters, recordsSent: Int) -> String {
            let parts: [String?] = [
                pausesText(since: start), bytesText(since: start, recordsSent: recordsSent), slowText(since: start),
                writerTimeText(since: start),
            ]
            return parts.compactMap { $0 }.joined(separator: "; ")
        }

        /// The daemon's bytes written and read a record of the `recordsSent` from `start` to these.
        private func bytesText(since start: DaemonCounters, recordsSent: Int) -> String? {
            guard let io, let before = start.io else { return nil }
            let records = Double(max(1, recordsSent))
            let written = Double(io.writtenBytes - before.writtenBytes) / records
            let read = Double(io.readBytes - before.readBytes) / records
            return "the daemon wrote \(Format.grouped(written)) bytes and read \(Format.grouped(read)) a record sent "
                + "since the command started"
        }

        /// What the writer thread did from `start` to these, as shares of the time between: batches' work (their
        /// transactions less their `COMMIT`), their `COMMIT` (the WAL written and synced), and pauses for checkpoints.
        private func writerTimeText(since start: DaemonCounters) -> String? {
            guard let commits = commits?.seconds(since: start.commits),
                let statements = commitStatements?.seconds(since: start.commitStatements),
                let pauses = writerPauses?.seconds(since: start.writerPauses), scrapedAt > start.scrapedAt
            else { return nil }
            let elapsed = Double(scrapedAt - start.scrapedAt) / 1e9
            func share(_ seconds: Double) -> String { Format.fixed(100 * seconds / elapsed, 1) + " %" }
            return "the writer's time: \(share(commits - statements)) in batches' work, \(share(statements)) in their "
                + "COMMIT, \(share(pauses)) paused for checkpoints"
        }

        /// Answers and commits over 256 ms by the daemon's own clock, and `COMMIT` statements and writer's pauses
        /// over 128 ms, from `start` to these: an answer the bench saw late that the daemon did not was late outside
        /// that clock (before the daemon read its line, in the socket, or in the bench's own threads).
        private func slowText(since start: DaemonCounters) -> String? {
            guard let answers = answers?.since(start.answers), let commits = commits?.since(start.commits) else {
                return nil
            }
            var text =
                "by the daemon's own clock (a line read to its answer queued) \(answers.over) answers over 256 ms of "
                + "\(answers.all), and \(commits.over) commits over 256 ms of \(commits.all)"
            if let statements = commitStatements?.since(start.commitStatements) {
                text += " (\(statements.over) of their COMMIT statements over 128 ms)"
            }
            if let pauses = writerPauses?.since(start.writerPauses) {
                text += "; \(pauses.over) of \(pauses.all) writer's pauses over 128 ms"
            }
            return text
        }

        private func pausesText(since start: DaemonCounters) -> String {
            guard let pauses, let seconds, let before = start.pauses, let beforeSeconds = start.seconds else {
                return "the writer's pauses for checkpoints not scraped"
            }
            var text =
                "the writer paused \(Format.grouped(pauses - before)) times for checkpoints meanwhile, "
                + "\(Format.fixed(seconds - beforeSeconds, 1)) s in all"
            if let erasureTruncates, let truncatesBefore = start.erasureTruncates {
                text += ", the WAL emptied \(Format.grouped(erasureTruncates - truncatesBefore)) times for erasures"
            }
            return text
        }
    }
}

/// One of the daemon's histograms as scraped: its observations in all and within one bound, and their sum.
private struct Tally {
    var all: Double
    var within: Double
    var sum: Double

    init?(_ name: String, within bound: String, in scrape: MetricsProbe.Scrape) {
        guard let all = scrape.value(name + "_count"),
            let within = scrape.value(name + #"_bucket{le=""# + bound + #""}"#),
            let sum = scrape.value(name + "_sum")
        else { return nil }
        self.all = all
        self.within = within
        self.sum = sum
    }

    /// The observations' sum from `start` to this (seconds, for the daemon's time histograms).
    func seconds(since start: Tally?) -> Double? {
        start.map { sum - $0.sum }
    }

    /// Observations over the bound and in all from `start` to this, grouped for a row; nil without a `start`.
    func since(_ start: Tally?) -> (over: String, all: String)? {
        guard let start else { return nil }
        return (Format.grouped((all - within) - (start.all - start.within)), Format.grouped(all - start.all))
    }
}

/// A command (`offertrack seal`, or the control's sleep) as a child process, waited for on a thread of its own so
/// that its end is timed while the traffic goes on.
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

    /// Ends the command at once if it still runs.
    func kill() {
        if ended == nil { _ = Glibc.kill(child.pid, SIGKILL) }
    }

    /// When the command exited (`Stopwatch` ns), nil while it runs.
    var ended: UInt64? { lock.withLock { endedAt } }
    var status: Int32? { lock.withLock { exitStatus } }
}
