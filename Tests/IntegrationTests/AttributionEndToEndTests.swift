import Foundation
import OfferTrackDomain
import Posix
import Simulator
import TestSupport
import Testing
import WireFormat

/// Attribution through the real daemon and CLI: order independence, rebuild, verify, both report paths.
@Suite struct AttributionEndToEndTests {
    /// A holding period of 45 days: the simulator ends some trials unpaid 30–36 days after the conversion.
    static let rules = """
        {"currency":"EUR","holdingPeriodHours":1080,"rules":[{"affiliateToken":"*","amountMinor":500},
        {"affiliateToken":"1010lKxy","amountMinor":700},
        {"affiliateToken":"1010lKxy","campaignToken":"spring26","amountMinor":900,"from":"2026-11-02T00:00:00Z"}]}
        """
    /// Other windows than the daemon's: reports with these recompute in memory.
    static let narrowRules = """
        {"currency":"EUR","attributionWindowHours":2,"eligibilityFreshnessHours":1,
        "rules":[{"affiliateToken":"*","amountMinor":300}]}
        """

    static let workload: [String] = Array(WorkloadSimulator(users: 120, seed: 7, days: 3).lines)

    /// Runs the CLI; expects exit 0 and returns stdout.
    static func cli(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let outcome = try Shell.run(Binaries.cli, arguments, environment: ["PATH": "/usr/bin:/bin"])
        #expect(outcome.status == 0, "offertrack \(arguments): \(outcome.output)", sourceLocation: sourceLocation)
        return outcome.output
    }

    /// When reports and explanations see the conversions: some have qualified, some are pending, some lapsed.
    static let asOf = "2026-12-16T03:30:00Z"

    /// Users whose verdicts the order-independence tests compare: some that convert, lapse, or neither.
    static let explainedUsers: [String] = {
        var users: [String] = []
        for line in workload {
            guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)), !users.contains(record.user)
            else { continue }
            if case .outcome = record.body {
                users.append(record.user)
            } else if users.count < 2 {
                users.append(record.user)
            }
            if users.count == 12 { break }
        }
        return users
    }()

    /// Every grouping in JSON (as of a time when some conversions are pending and others qualified), the CSV,
    /// and the explanations of `explainedUsers`, as one string.
    static func allReports(db: String, rules: String, explaining: Bool = true) throws -> String {
        var text = ""
        for grouping in ReportGrouping.allCases {
            text += try cli([
                "report", "--db", db, "--rules", rules, "--by", grouping.rawValue, "--format", "json", "--as-of",
                Self.asOf,
            ])
        }
        text += try cli(["report", "--db", db, "--rules", rules, "--since", "2026-11-01T12:00:00Z", "--format", "csv"])
        for user in explaining ? explainedUsers : [] {
            text += try cli([
                "explain", "--db", db, "--rules", rules, "--user", user, "--format", "json", "--as-of",
                Self.asOf,
            ])
        }
        return text
    }

    @Test func reportsAreTheSameWhateverOrderTheRecordsArriveIn() throws {
        let directory = ScratchDirectory()
        let rulesPath = directory.file("rules.json")
        try Self.rules.write(toFile: rulesPath, atomically: true, encoding: .utf8)
        let seed = UInt64.random(in: 0...UInt64.max)
        print("reportsAreTheSameWhateverOrderTheRecordsArriveIn: shuffle seed \(seed)")
        var generator = SeededGenerator(seed: seed)
        var reference: String?
        for round in 0..<4 {
            let order = round == 0 ? Self.workload : Self.workload.shuffled(using: &generator)
            let db = directory.file("order-\(round).db")
            let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rulesPath], databasePath: db)
            guard daemon.waitReady() else { return }
            let client = try LineClient(path: daemon.socketPath)
            let half = order.count / 2
            let first = client.exchange(Array(order[..<half]))
            // A report taken midway must not disturb what comes after.
            _ = try Self.allReports(db: db, rules: rulesPath, explaining: false)
            let second = client.exchange(Array(order[half...]))
            let answers = first + second
            #expect(answers.count == order.count)
            #expect(answers.allSatisfy { $0.status == "accepted" || $0.status == "duplicate" })
            let reports = try Self.allReports(db: db, rules: rulesPath)
            if let reference {
                #expect(reports == reference, "order \(round) changed the reports (seed \(seed))")
            } else {
                reference = reports
                // The workload has lapsed, pending and qualified conversions, and explanations of each.
                for state in ["lapsed", "pending", "qualified"] {
                    #expect(reports.contains(#""state":"\#(state)""#), "no \(state) explanation: \(reports)")
                }
                #expect(reports.contains(#""status":"none""#) && reports.contains(#""status":"unattributed""#))
            }
            daemon.signal(2)
            #expect(daemon.waitExit() == 0)
            _ = try FileManager.default.removeItem(atPath: directory.file("offertrack.sock"))
        }
    }

    @Test func rebuildLeavesReportsByteIdenticalAndVerifyPasses() throws {
        let directory = ScratchDirectory()
        let rulesPath = directory.file("rules.json")
        let narrowPath = directory.file("narrow.json")
        try Self.rules.write(toFile: rulesPath, atomically: true, encoding: .utf8)
        try Self.narrowRules.write(toFile: narrowPath, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rulesPath])
        guard daemon.waitReady() else { return }
        let client = try LineClient(path: daemon.socketPath)
        #expect(client.exchange(Self.workload).count == Self.workload.count)
        let db = daemon.databasePath

        let before = try Self.allReports(db: db, rules: rulesPath)
        #expect(try Self.cli(["rebuild", "--db", db, "--rules", rulesPath]).contains("rebuilt"))
        #expect(try Self.allReports(db: db, rules: rulesPath) == before)
        let verify = try Self.cli(["verify", "--db", db, "--rules", rulesPath])
        // Every check passes: the journal's ten and the two of sealed days (none sealed here).
        let lines = verify.split(separator: "\n")
        #expect(lines.count == 12 && lines.allSatisfy { $0.hasPrefix("ok: ") }, "\(verify)")

        // Other windows: the in-memory recomputation must equal the derived tables rebuilt under them.
        let recomputed = try Self.allReports(db: db, rules: narrowPath)
        #expect(recomputed != before)
        _ = try Self.cli(["rebuild", "--db", db, "--rules", narrowPath])
        #expect(try Self.allReports(db: db, rules: narrowPath) == recomputed)
        // Records that arrive now are maintained under the windows the tables record.
        let late = Array(WorkloadSimulator(users: 30, seed: 99, days: 1).lines)
        #expect(client.exchange(late).allSatisfy { $0.status == "accepted" || $0.status == "duplicate" })
        let afterLate = try Self.cli(["verify", "--db", db])
        #expect(!afterLate.contains("FAILED"), "\(afterLate)")
    }

    @Test func reportRejectsAnEmptyRangeAndBadRules() throws {
        let directory = ScratchDirectory()
        let daemon = try DaemonProcess(in: directory)
        guard daemon.waitReady() else { return }
        let db = daemon.databasePath
        let range = try Shell.run(
            Binaries.cli, ["report", "--db", db, "--since", "2026-11-02", "--until", "2026-11-01"])
        #expect(range.status == 64)
        let bad = directory.file("bad.json")
        try #"{"currency":"usd","rules":[]}"#.write(toFile: bad, atomically: true, encoding: .utf8)
        let rules = try Shell.run(Binaries.cli, ["report", "--db", db, "--rules", bad])
        #expect(rules.status == 78 && rules.output.contains("currency"), "\(rules.output)")
        let missing = try Shell.run(Binaries.cli, ["report", "--db", directory.file("nope.db")])
        #expect(missing.status == 66)
        #expect(try Self.cli(["report", "--db", db, "--format", "json"]) == "[]\n")
    }
}

extension AttributionEndToEndTests {
    @Test func aJournalOnlyDaemonLeavesReportsCorrectAndTheNextStartCatchesUp() throws {
        let directory = ScratchDirectory()
        let rulesPath = directory.file("rules.json")
        try Self.rules.write(toFile: rulesPath, atomically: true, encoding: .utf8)
        let notify = try NotifyListener(in: directory)
        var daemon = try DaemonProcess(
            in: directory, arguments: ["--rules", rulesPath, "--journal-only"], notify: notify)
        guard daemon.waitReady() else { return }
        let client = try LineClient(path: daemon.socketPath)
        #expect(client.exchange(Self.workload).count == Self.workload.count)
        let db = daemon.databasePath
        // The derived tables are marked stale: reports recompute from the journal; verify checks the records,
        // skips the comparison with a recomputation and says why (an edge's journal is such a journal: its
        // nightly backup must verify).
        let recomputed = try Self.allReports(db: db, rules: rulesPath)
        let stale = try Shell.run(Binaries.cli, ["verify", "--db", db, "--rules", rulesPath])
        #expect(stale.status == 0, "\(stale.output)")
        #expect(stale.output.contains("skipped: derived tables equal a fresh recomputation"), "\(stale.output)")
        #expect(stale.output.contains("ok: integrity_check") && !stale.output.contains("FAILED"), "\(stale.output)")
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
        // A normal start recomputes them; the reports, now from the tables, are the same bytes.
        notify.reset()
        daemon = try DaemonProcess(in: directory, arguments: ["--rules", rulesPath], notify: notify)
        guard daemon.waitReady() else { return }
        #expect(try Self.allReports(db: db, rules: rulesPath) == recomputed)
        #expect(!(try Self.cli(["verify", "--db", db, "--rules", rulesPath])).contains("FAILED"))
    }
}

extension AttributionEndToEndTests {
    /// Every line of `workload` but each user's last, and those last lines.
    static func splitByEachUsersLastRecord(_ lines: [String]) -> (earlier: [String], last: [String]) {
        var lastIndex: [ExactString: Int] = [:]
        for (index, line) in lines.enumerated() {
            if case .valid(let record) = RecordValidator.validate(Array(line.utf8)) {
                lastIndex[ExactString(record.user)] = index
            }
        }
        let held = Set(lastIndex.values)
        return (
            lines.indices.filter { !held.contains($0) }.map { lines[$0] }, held.sorted().map { lines[$0] }
        )
    }

    /// Polls the daemon's stderr for `text`.
    static func waitForLog(_ daemon: DaemonProcess, containing text: String, timeout: TimeInterval = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if daemon.stderr.contains(text) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    @Test func aRestartedDaemonLearnsItsUsersAndJoinsTheirLateRecordsExactly() throws {
        let directory = ScratchDirectory()
        let rulesPath = directory.file("rules.json")
        try Self.rules.write(toFile: rulesPath, atomically: true, encoding: .utf8)
        let learned = "the join knows every journaled user"
        // Reference: everything in one go.
        let notify = try NotifyListener(in: directory)
        let reference = try DaemonProcess(
            in: directory, arguments: ["--rules", rulesPath], notify: notify,
            databasePath: directory.file("reference.db"))
        guard reference.waitReady() else { return }
        #expect(try LineClient(path: reference.socketPath).exchange(Self.workload).count == Self.workload.count)
        let expected = try Self.allReports(db: reference.databasePath, rules: rulesPath)
        reference.signal(Signals.terminate)
        #expect(reference.waitExit() == 0)
        try FileManager.default.removeItem(atPath: reference.socketPath)

        // Every user's last record arrives after a restart, once the new daemon has learned who is journaled.
        let (earlier, last) = Self.splitByEachUsersLastRecord(Self.workload)
        notify.reset()
        let first = try DaemonProcess(in: directory, arguments: ["--rules", rulesPath], notify: notify)
        guard first.waitReady() else { return }
        #expect(try LineClient(path: first.socketPath).exchange(earlier).count == earlier.count)
        first.signal(Signals.terminate)
        #expect(first.waitExit() == 0)
        notify.reset()
        let second = try DaemonProcess(in: directory, arguments: ["--rules", rulesPath], notify: notify)
        guard second.waitReady() else { return }
        #expect(Self.waitForLog(second, containing: learned), "\(second.stderr)")
        #expect(second.stderr.contains("\(Set(earlier.compactMap(Self.user)).count) read"), "\(second.stderr)")
        #expect(try LineClient(path: second.socketPath).exchange(last).count == last.count)
        #expect(try Self.allReports(db: second.databasePath, rules: rulesPath) == expected)
        #expect(!(try Self.cli(["verify", "--db", second.databasePath, "--rules", rulesPath])).contains("FAILED"))
    }

    static func user(_ line: String) -> ExactString? {
        guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else { return nil }
        return ExactString(record.user)
    }
}
