import AttributionJoin
import Foundation
import JournalStore
import OfferTrackDomain
import Posix
import SQLite
import Simulator
import Synchronization
import TestSupport
import WireFormat

/// How big the erasure section is: the full run, or `--smoke` (seconds).
struct ErasureScale {
    /// Records in the journal, of which the person's (`HotUserStream.user`).
    var journalRecords: Int
    var personRecords: Int
    /// Realistic traffic paced beside the erasure: records/s over `clients` connections, for `seconds`; the
    /// erasure is sent `erasureAfterSeconds` into it.
    var pacedRate: Double
    var pacedSeconds: Double
    var erasureAfterSeconds: Double
    var clients: Int
    /// People forgotten before the returning traffic of the check's cost, and its records and pairs.
    var erasedUsers: Int
    var returningRecords: Int
    var pairs: Int

    static let full = ErasureScale(
        journalRecords: 10_000_000, personRecords: 100_000, pacedRate: 1_000, pacedSeconds: 20,
        erasureAfterSeconds: 8, clients: 4, erasedUsers: 1_000, returningRecords: 200_000, pairs: 5)

    static let smoke = ErasureScale(
        journalRecords: 40_000, personRecords: 10_000, pacedRate: 500, pacedSeconds: 2, erasureAfterSeconds: 0.5,
        clients: 2, erasedUsers: 20, returningRecords: 2_000, pairs: 1)
}

/// Section 9, issue 32: forgetting a person (SPEC 11).
///
/// 1. One erasure of a person with `personRecords` records in a journal of `journalRecords` (built in process
///    under the holding rules, then opened by the daemon with them), sent while realistic traffic is paced over
///    other connections: how long until its answer, and the other answers' latency meanwhile (the rename goes in
///    chunks between their batches, schema 13, and the erasure is answered after the last).
/// 2. What checking each incoming record against the forgotten people costs: the same returning-user traffic
///    pipelined into a journal where `erasedUsers` people were forgotten and into one where as many other
///    records were sent instead, alternating; records/s and the daemon's CPU a record.
final class ErasureSection {
    static let section = "9 Erasure"

    private let context: SectionContext
    private let scale: ErasureScale

    init(context: SectionContext, scale: ErasureScale) {
        self.context = context
        self.scale = scale
    }

    func run() throws {
        try measureLargeErasure()
        FileSystem.syncAll()
        try measureCheckCost()
    }

    // MARK: 1. One large erasure beside traffic

    private func measureLargeErasure() throws {
        let path = context.newDatabase()
        let others = scale.journalRecords - scale.personRecords
        context.progress("erasure: building a journal of \(Format.grouped(Double(others))) records")
        _ = try BigJournal.build(path: path, count: others) {
            self.context.progress("  \(Format.grouped(Double($0))) records")
        }
        context.progress(
            "erasure: adding \(Format.grouped(Double(scale.personRecords))) records of \(HotUserStream.user)")
        do {
            let writer = try JournalWriter(
                path: path, durability: .normal, schema: .migrate, settings: QueryCost.holdingSettings)
            var person = HotUserStream()
            while person.produced < scale.personRecords {
                _ = try writer.append(
                    try person.take(min(8_192, scale.personRecords - person.produced)), receivedAt: 0)
            }
        }
        let rulesPath = context.scratch.file("erasure-rules.json")
        try QueryCost.writeHoldingRules(to: rulesPath)
        FileSystem.syncAll()
        let daemon = try context.startDaemon("erasure-large", path, arguments: ["--rules", rulesPath])
        defer { try? daemon.stop() }
        _ = try daemon.waitForLog(containing: "the join knows every journaled user", timeoutSeconds: 1_800)
        let traffic = Workload(count: Int(scale.pacedRate * scale.pacedSeconds), seed: 9, start: Self.trafficStart)
        let latency = Mutex<Result<LatencyResult, any Error>?>(nil)
        let (records, rate, clients, socket) = (
            traffic.submissions, scale.pacedRate, scale.clients, daemon.socketPath
        )
        let paced = Thread {
            let measured = Result {
                try AckLatency.measure(records[...], recordsPerSecond: rate, clients: clients, socketPath: socket)
            }
            latency.withLock { $0 = measured }
        }
        paced.stackSize = 1 << 22
        paced.start()
        Thread.sleep(forTimeInterval: scale.erasureAfterSeconds)
        let erasure = try Self.erasure(id: "bench-erasure-1", user: HotUserStream.user)
        let client = try PipelinedClient(socketPath: daemon.socketPath, records: [erasure][...])
        let sent = Stopwatch.now()
        for worker in client.start() { worker.join() }
        try client.check()
        let answeredMilliseconds = Double(client.finishedAt - sent) / 1e6
        var measured: Result<LatencyResult, any Error>?
        while measured == nil {
            Thread.sleep(forTimeInterval: 0.05)
            measured = latency.withLock { $0 }
        }
        guard case .success(let others)? = measured else {
            if case .failure(let error)? = measured { throw error }
            throw BenchFailure("the paced traffic gave no result")
        }
        let renamed = try Self.records(of: Erasure.name(erasureID: "bench-erasure-1"), in: path)
        guard renamed == scale.personRecords + 1 else {
            throw BenchFailure("the erasure renamed \(renamed) records, not \(scale.personRecords + 1)")
        }
        context.add(
            ResultRow(
                section: Self.section,
                name: "erasure of a person with \(Format.grouped(Double(scale.personRecords))) records in a "
                    + "\(Format.grouped(Double(scale.journalRecords)))-record journal, sent to the running daemon",
                value: "answered in \(Format.fixed(answeredMilliseconds, 1)) ms",
                comparison: "target ≤ 2,000 ms; every record renamed (\(Format.grouped(Double(renamed))))"))
        context.add(
            ResultRow(
                section: Self.section,
                name: "other clients meanwhile: ack latency p50 / p99 / max, \(Format.grouped(scale.pacedRate)) "
                    + "records/s paced over \(scale.clients) connections for \(Format.fixed(scale.pacedSeconds, 0)) s "
                    + "around the erasure",
                value: "\(Format.fixed(others.p50Milliseconds, 2)) / \(Format.fixed(others.p99Milliseconds, 2)) / "
                    + "\(Format.fixed(others.maxMilliseconds, 2)) ms",
                comparison: "target: every answer < 250 ms; achieved \(Format.grouped(others.achievedPerSecond))/s"))
    }

    /// The paced traffic's records start after the journal's (new users, no history of theirs to join).
    static let trafficStart = WorkloadSimulator.defaultStart + 120 * Timestamp.millisecondsPerDay

    /// An erasure record of `user`, validated as the daemon would.
    static func erasure(id: String, user: String) throws -> Submission {
        let line = Array(
            #"{"type":"erasure","id":"\#(id)","ts":"2026-12-01T00:00:00Z","user":"\#(user)","ticket":"BENCH-\#(id)"}"#
                .utf8)
        guard case .valid(let record) = RecordValidator.validate(line) else {
            throw BenchFailure("the bench's erasure line is not valid")
        }
        return Submission(record: record, line: line)
    }

    static func records(of user: String, in path: String) throws -> Int {
        let connection = try Connection(path: path, mode: .readOnly)
        let count = try connection.prepare("SELECT count(*) FROM records WHERE user = ?1")
        try count.bind(user, at: 1)
        defer { count.reset() }
        _ = try count.step()
        return Int(count.int64(0))
    }

    // MARK: 2. The check of every record against the forgotten people

    private func measureCheckCost() throws {
        let returning = Workload(returningUsers: max(1, scale.returningRecords / 20), records: scale.returningRecords)
        let clients = 8
        var cpu: [Bool: [Double]] = [:]
        let pairs = try PairedRuns.measure(pairs: scale.pairs) {
            try self.returningRate(returning, clients: clients, forgotten: true, cpu: &cpu)
        } without: {
            try self.returningRate(returning, clients: clients, forgotten: false, cpu: &cpu)
        }
        let median = { (forgotten: Bool) in PairedRuns.median(cpu[forgotten] ?? []) }
        let cpuRatio = median(true) / max(1e-9, median(false))
        context.add(
            ResultRow(
                section: Self.section,
                name:
                    "returning users pipelined over \(clients) connections, \(Format.grouped(Double(scale.erasedUsers))) "
                    + "people forgotten before, against as many other records sent instead",
                value: "\(Format.ratio(pairs.medianRatio)) records/s, \(Format.ratio(cpuRatio)) daemon CPU a record",
                comparison: "\(Format.grouped(pairs.medianWith)) against \(Format.grouped(pairs.medianWithout)) "
                    + "records/s (alternating pairs: \(pairs.ratiosDescription)); CPU µs a record "
                    + "\(Format.fixed(median(true), 2)) against \(Format.fixed(median(false), 2)); target ≤ 1.02× "
                    + "(the pairs' spread is the resolution)"))
    }

    /// One run: a fresh journal given `erasedUsers` erasures (or as many capabilities records), then the
    /// returning traffic pipelined; records/s, and the daemon's CPU µs a record appended to `cpu`.
    private func returningRate(
        _ workload: Workload, clients: Int, forgotten: Bool, cpu: inout [Bool: [Double]]
    ) throws -> Double {
        FileSystem.syncAll()
        let daemon = try context.startDaemon("erasure-check", context.newDatabase())
        defer { try? daemon.stop() }
        let before = try (0..<scale.erasedUsers).map { index in
            forgotten
                ? try Self.erasure(id: "gone-\(index)", user: "gone-user-\(index)")
                : try Self.capabilities(id: "kept-\(index)", user: "gone-user-\(index)")
        }
        let seeding = try PipelinedClient(socketPath: daemon.socketPath, records: before[...])
        for worker in seeding.start() { worker.join() }
        try seeding.check()
        guard let started = ProcessCPU.seconds(pid: daemon.pid) else { throw BenchFailure("no CPU time") }
        let rate = try IngestThroughput.measure(workload, clients: clients, socketPath: daemon.socketPath)
        guard let ended = ProcessCPU.seconds(pid: daemon.pid) else { throw BenchFailure("no CPU time") }
        cpu[forgotten, default: []].append((ended - started) * 1e6 / Double(workload.count))
        return rate
    }

    private static func capabilities(id: String, user: String) throws -> Submission {
        let line = Array(
            #"{"type":"capabilities","id":"\#(id)","ts":"2026-12-01T00:00:00Z","user":"\#(user)","authorization":"authorized","capabilities":[]}"#
                .utf8)
        guard case .valid(let record) = RecordValidator.validate(line) else {
            throw BenchFailure("the bench's capabilities line is not valid")
        }
        return Submission(record: record, line: line)
    }
}
