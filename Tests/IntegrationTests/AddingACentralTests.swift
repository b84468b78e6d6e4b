import Foundation
import OfferTrackDomain
import Posix
import SQLite
import Simulator
import TestSupport
import Testing
import WireFormat

/// docs/fleet.md, "Adding a central daemon", run as written on a real nats-server: central a (partitions 0-1) is
/// stopped, `offertrack split` moves partition 1 into a new journal, a restarts with partition 0 and the new central
/// c consumes partition 1 from where a's durable consumer left off. Held against one daemon that ingested the same
/// records throughout: reports, explanations, the day published before the split (rewritten as the same bytes) and
/// the day published after it, with a forgotten person's conversion and a review of a published conversion among
/// what moved; every record the edge acknowledged is in one central journal once.
@Suite(.serialized) struct AddingACentralTests {
    /// Days published before the split (H is 24 h: the first day's conversions are the second day's rows) and after.
    static let before = ["2026-11-01", "2026-11-02"]
    static let after = "2026-11-03"

    /// `offertrack` with `arguments` and every journal of `daemons` as `--db`.
    static func fleet(_ arguments: [String], _ daemons: [DaemonProcess]) throws -> Shell.Outcome {
        try CLI.run(arguments + daemons.flatMap { ["--db", $0.databasePath] })
    }

    /// The partitions a journal records (`meta` `fleet_partitions`).
    static func partitions(of path: String) throws -> String? {
        try Connection(path: path, mode: .readOnly).scalarText(
            "SELECT value FROM meta WHERE key = 'fleet_partitions'")
    }

    /// Each journal's users' partitions (a forgotten person's as noted), as a set per journal.
    static func userPartitions(of path: String) throws -> Set<Int> {
        let connection = try Connection(path: path, mode: .readOnly)
        let noted = try connection.prepare("SELECT user, partition FROM user_partitions")
        var partitionOf: [String: Int] = [:]
        while try noted.step() { partitionOf[noted.text(0) ?? ""] = Int(noted.int64(1)) }
        let users = try connection.prepare("SELECT user FROM users")
        var found: Set<Int> = []
        while try users.step() {
            let user = users.text(0) ?? ""
            found.insert(partitionOf[user] ?? Partition.of(user: user, total: 4))
        }
        return found
    }

    /// Two centrals and an edge on `server`, and one daemon beside them, all given `rules`; nil when one did not
    /// start (the others stopped).
    private static func fleetAndOneDaemon(_ server: NATSServer, rules: String) throws -> (
        centrals: [DaemonProcess], edge: DaemonProcess, single: DaemonProcess
    )? {
        guard let (centrals, edge) = try TestFleet.twoCentralsAndAnEdge(server, extra: ["--rules", rules]) else {
            return nil
        }
        let single = try DaemonProcess(in: ScratchDirectory("ot-single"), arguments: ["--rules", rules])
        guard single.waitReady() else {
            DaemonProcess.terminateCleanly(centrals + [edge, single])
            return nil
        }
        return (centrals, edge, single)
    }

    @Test func aCentralsPartitionMovesToANewCentralAndTheFleetPublishesWhatOneDaemonDoes() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        let rules = directory.file("rules.json")
        try TestFleet.rules.write(toFile: rules, atomically: true, encoding: .utf8)
        guard let fleet = try Self.fleetAndOneDaemon(server, rules: rules) else { return }
        var centrals = fleet.centrals
        let (edge, single) = (fleet.edge, fleet.single)
        defer { DaemonProcess.terminateCleanly(centrals + [edge, single]) }
        let toEdge = try LineClient(path: edge.socketPath)
        let toSingle = try LineClient(path: single.socketPath)
        func send(_ lines: [String]) {
            #expect(toEdge.exchange(lines).allSatisfy { $0.status == "accepted" })
            #expect(toSingle.exchange(lines).allSatisfy { $0.status == "accepted" })
        }
        var sent = 0
        func sendAndWait(_ lines: [String]) throws {
            send(lines)
            sent += lines.count
            #expect(try eventually(60) { try TestFleet.centralLines(centrals).count >= sent })
        }

        // Before the split: a day's traffic, a conversion of a partition-1 person, and a partition-1 user's
        // conversion that a review voids after its day is published.
        let person = (0...).lazy.map { "person-\($0)" }.first { Partition.of(user: $0, total: 4) == 1 } ?? ""
        let reviewed = (0...).lazy.map { "paid-\($0)" }.first { Partition.of(user: $0, total: 4) == 1 } ?? ""
        let first = FleetRecords.simulated(users: 300, seed: 61)
        try sendAndWait(
            first + TestRecords.conversion(person, affiliate: "aff-p", campaign: nil, at: "2026-11-01T12:00:00Z")
                + TestRecords.conversion(reviewed, affiliate: "aff-r", campaign: nil, at: "2026-11-01T13:00:00Z"))
        let published = directory.file("published")
        let fromSingle = directory.file("single")
        for path in [published, fromSingle] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        for day in Self.before {
            let export = ["export", "--rules", rules, "--date", day]
            #expect(try Self.fleet(export + ["--out", published], centrals).status == 0)
            #expect(try CLI.run(export + ["--out", fromSingle, "--db", single.databasePath]).status == 0)
        }
        // The person is forgotten and the conversion voided, both after the day was published.
        let erasure =
            #"{"type":"erasure","id":"E-61","ts":"2026-11-02T20:00:00Z","user":"\#(person)","ticket":"DSR-61"}"#
        let void = ReviewRecords.review(
            "R-61", user: reviewed, conversion: "o-\(reviewed)", "void", reason: "fraud",
            at: Timestamp.parse("2026-11-02T21:00:00Z") ?? 0)
        try sendAndWait([erasure, void])
        let a = centrals[0]
        #expect(try eventually(30) { try Self.userPartitions(of: a.databasePath) == [0, 1] })

        // Step 1: with a running, split refuses (it would consume partition 1 into the old journal).
        let newHost = ScratchDirectory("ot-central-c")
        let target = newHost.file("offertrack.db")
        let split = ["split", "--db", a.databasePath, "--to", target, "--partitions", "1"]
        // A journal that is not a central one (a copy of the single daemon's) is refused, 65.
        let plain = directory.file("plain.db")
        #expect(try CLI.run(["backup", "--db", single.databasePath, "--to", plain]).status == 0)
        let notCentral = try CLI.run(["split", "--db", plain, "--to", directory.file("x.db"), "--partitions", "1"])
        #expect(notCentral.status == 65 && notCentral.output.contains("not a central journal"), "\(notCentral.output)")
        let busy = try CLI.run(split)
        #expect(busy.status == 75 && busy.output.contains("stop it first"), "\(busy.output)")
        #expect(!FileManager.default.fileExists(atPath: target))
        // Step 2: a stopped, then split; refused for partitions a does not hold or holds all of.
        a.signal(Signals.terminate)
        #expect(a.waitExit() == 0)
        for wrong in ["2", "0-1"] {
            let refused = try CLI.run(["split", "--db", a.databasePath, "--to", target, "--partitions", wrong])
            #expect(refused.status == 64, "\(wrong): \(refused.output)")
        }
        // What a run stopped before narrowing the source leaves (its unfinished new journal) is started over.
        try "unfinished".write(toFile: target + ".split", atomically: true, encoding: .utf8)
        let done = try CLI.run(split)
        #expect(done.status == 0, "\(done.output)")
        #expect(done.output.contains("start its daemon with --partitions 1"), "\(done.output)")
        #expect(try Self.partitions(of: a.databasePath) == "0" && Self.partitions(of: target) == "1")
        #expect(try Self.userPartitions(of: a.databasePath) == [0] && Self.userPartitions(of: target) == [1])
        try Self.expectOnlyTheJournal(in: newHost)
        let again = try CLI.run(split)
        #expect(again.status == 73 && again.output.contains("exists"), "\(again.output)")
        // A run stopped after narrowing the source, before naming the new journal, is finished by running it again.
        try FileManager.default.moveItem(atPath: target, toPath: target + ".split")
        let finished = try CLI.run(split)
        #expect(finished.status == 0 && finished.output.contains("finished an earlier split"), "\(finished.output)")
        try Self.expectOnlyTheJournal(in: newHost)

        // Step 3: a restarted with partition 0 (the old list is refused), c started with partition 1; the edge goes on.
        a.notify.reset()
        let stale = try DaemonProcess(
            in: a.directory,
            arguments: ["--consume", server.url, "--partitions", "0-1", "--rules", rules] + TestFleet.common,
            notify: a.notify)
        #expect(stale.waitExit() == 78)
        centrals = try Self.afterTheSplit(a, centrals[1], newHost: newHost, server: server, rules: rules)
        guard centrals.allSatisfy({ $0.waitReady() }) else { return }
        let second = Array(
            WorkloadSimulator(
                users: 300, seed: 62, start: WorkloadSimulator.defaultStart + Timestamp.millisecondsPerDay
            )
            .filter { !$0.isDuplicate && $0.record.type != .erasure }.map(\.line))
        try sendAndWait(second)
        // Every acknowledged record is in one central journal once (the erasure's person renamed there).
        let verifyEdge = try Self.fleet(["verify", "--rules", rules, "--edge", edge.databasePath], centrals)
        #expect(verifyEdge.status == 0, "\(verifyEdge.output)")
        #expect(try TestFleet.centralLines(centrals).count == sent)

        // The day published before the split is rewritten as the same bytes; the next is one daemon's.
        let rewritten = directory.file("rewritten")
        try FileManager.default.createDirectory(atPath: rewritten, withIntermediateDirectories: true)
        for day in Self.before {
            let export = ["export", "--rules", rules, "--date", day, "--out", rewritten]
            #expect(try Self.fleet(export, centrals).status == 0)
        }
        for suffix in Self.before.flatMap({ ["\($0).csv", "\($0).manifest.json"] }) {
            let name = "commissions-\(suffix)"
            let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(rewritten)/\(name)"))
            #expect(bytes == (try Data(contentsOf: URL(fileURLWithPath: "\(published)/\(name)"))), "\(name)")
        }
        let exportAfter = ["export", "--rules", rules, "--date", Self.after]
        #expect(try Self.fleet(exportAfter + ["--out", published], centrals).status == 0)
        #expect(try CLI.run(exportAfter + ["--out", fromSingle, "--db", single.databasePath]).status == 0)
        for day in Self.before + [Self.after] {
            let csv = "commissions-\(day).csv"
            let fleetCSV = try String(contentsOfFile: "\(published)/\(csv)", encoding: .utf8)
            #expect(fleetCSV == (try String(contentsOfFile: "\(fromSingle)/\(csv)", encoding: .utf8)), "\(csv)")
            #expect(day == Self.before[0] || fleetCSV.split(separator: "\n").count > 3, "\(csv): \(fleetCSV)")
        }
        let adjustments = try String(contentsOfFile: "\(published)/commissions-\(Self.after).csv", encoding: .utf8)
        #expect(adjustments.contains("adjustment,o-\(reviewed),"), "the void's reversal: \(adjustments)")

        // Reports and explanations over the three journals are one daemon's; verify passes.
        try Self.expectSameAnswers(
            centrals, single, rules: rules, users: ["erased:E-61", reviewed] + Self.users(first + second))
    }

    /// A central journal whose first days are sealed (SPEC 12) splits too: what sealing kept of the moving users
    /// (an erased person's conversion among it) moves with them, the sealed days' presentation counts stay in the
    /// source, and reports, explanations and the days published before the seal are unchanged, as one sealed daemon's.
    @Test func aSealedCentralJournalSplitsWithWhatSealingKept() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        let rules = directory.file("rules.json")
        try
            #"{"currency":"USD","attributionWindowHours":48,"holdingPeriodHours":24,"retentionDays":5,"rules":[{"affiliateToken":"*","amountMinor":300}]}"#
            .write(toFile: rules, atomically: true, encoding: .utf8)
        guard let fleet = try Self.fleetAndOneDaemon(server, rules: rules) else { return }
        var centrals = fleet.centrals
        let (edge, single) = (fleet.edge, fleet.single)
        defer { DaemonProcess.terminateCleanly(centrals + [edge, single]) }
        let person = (0...).lazy.map { "person-\($0)" }.first { Partition.of(user: $0, total: 4) == 1 } ?? ""
        let first =
            FleetRecords.simulated(users: 300, seed: 71)
            + TestRecords.conversion(person, affiliate: "aff-p", campaign: nil, at: "2026-11-01T12:00:00Z") + [
                #"{"type":"erasure","id":"E-71","ts":"2026-11-02T20:00:00Z","user":"\#(person)","ticket":"DSR-71"}"#
            ]
        #expect(try LineClient(path: edge.socketPath).exchange(first).allSatisfy { $0.status == "accepted" })
        #expect(try LineClient(path: single.socketPath).exchange(first).allSatisfy { $0.status == "accepted" })
        #expect(try eventually(60) { try TestFleet.centralLines(centrals).count >= first.count })
        let published = directory.file("published")
        let rewritten = directory.file("rewritten")
        for path in [published, rewritten] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        let days = ["2026-11-01", "2026-11-02", "2026-11-03"]
        for day in days {
            #expect(
                try Self.fleet(["export", "--rules", rules, "--date", day, "--out", published], centrals).status == 0)
        }
        // Every journal sealed through 2026-11-04 (R = 5 days before 2026-11-10).
        for journal in centrals + [single] {
            let sealed = try CLI.run(["seal", "--db", journal.databasePath, "--rules", rules, "--as-of", "2026-11-10"])
            #expect(sealed.status == 0 && sealed.output.contains("to 2026-11-04"), "\(sealed.output)")
        }

        let a = centrals[0]
        a.signal(Signals.terminate)
        #expect(a.waitExit() == 0)
        let newHost = ScratchDirectory("ot-central-c")
        let done = try CLI.run(
            ["split", "--db", a.databasePath, "--to", newHost.file("offertrack.db"), "--partitions", "1"])
        #expect(done.status == 0, "\(done.output)")
        centrals = try Self.afterTheSplit(a, centrals[1], newHost: newHost, server: server, rules: rules)
        guard centrals.allSatisfy({ $0.waitReady() }) else { return }
        let (restarted, added) = (centrals[0], centrals[2])
        let counts = try [restarted, added].map {
            try Connection(path: $0.databasePath, mode: .readOnly).scalarInt(
                "SELECT count(*) FROM sealed_presentations")
        }
        #expect((counts[0] ?? 0) > 0 && counts[1] == 0, "sealed counts: \(counts)")
        for day in days {
            #expect(
                try Self.fleet(["export", "--rules", rules, "--date", day, "--out", rewritten], centrals).status == 0)
            for suffix in [".csv", ".manifest.json"] {
                let name = "commissions-\(day)\(suffix)"
                let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(rewritten)/\(name)"))
                #expect(bytes == (try Data(contentsOf: URL(fileURLWithPath: "\(published)/\(name)"))), "\(name)")
            }
        }
        try Self.expectSameAnswers(centrals, single, rules: rules, users: ["erased:E-71"] + Self.users(first))
        // After the horizon, the new central takes its partition's records.
        let later = Array(
            WorkloadSimulator(
                users: 100, seed: 72, start: WorkloadSimulator.defaultStart + 12 * Timestamp.millisecondsPerDay
            )
            .filter { !$0.isDuplicate && $0.record.type != .erasure }.map(\.line))
        #expect(try LineClient(path: edge.socketPath).exchange(later).allSatisfy { $0.status == "accepted" })
        #expect(try eventually(60) { try JournalInspector.count(of: added.databasePath) > 0 })
        var check = try Self.fleet(["verify", "--rules", rules, "--edge", edge.databasePath], centrals)
        _ = try eventually(60) {
            check = try Self.fleet(["verify", "--rules", rules, "--edge", edge.databasePath], centrals)
            return check.status == 0
        }
        #expect(check.status == 0, "\(check.output)")
        // The edge did not seal: what the centrals sealed is found by id.
        #expect(check.output.contains("of days a central journal sealed"), "\(check.output)")
    }

    /// Step 5: central a (stopped) restarted with partition 0, and the new central c started with partition 1 on
    /// `newHost`'s journal; with b, the fleet's central daemons in that order.
    static func afterTheSplit(
        _ a: DaemonProcess, _ b: DaemonProcess, newHost: ScratchDirectory, server: NATSServer, rules: String
    ) throws -> [DaemonProcess] {
        a.notify.reset()
        let restarted = try DaemonProcess(
            in: a.directory,
            arguments: ["--consume", server.url, "--partitions", "0", "--rules", rules] + TestFleet.common,
            notify: a.notify)
        let added = try DaemonProcess(
            in: newHost, arguments: ["--consume", server.url, "--partitions", "1", "--rules", rules] + TestFleet.common)
        return [restarted, b, added]
    }

    /// A new journal is the file alone: no temporary copy, `-wal` or `-shm` beside it.
    static func expectOnlyTheJournal(
        in directory: ScratchDirectory, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(names == ["offertrack.db"], "\(names)", sourceLocation: sourceLocation)
    }

    /// One user of each partition among `lines`.
    static func users(_ lines: [String]) -> [String] {
        let users = lines.compactMap { line -> String? in
            guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else { return nil }
            return record.user
        }
        return (0..<4).compactMap { partition in users.first { Partition.of(user: $0, total: 4) == partition } }
    }

    /// Reports by every grouping and the explanations of `users` over the central journals are `single`'s, and
    /// verify passes over them.
    static func expectSameAnswers(
        _ centrals: [DaemonProcess], _ single: DaemonProcess, rules: String, users: [String], asOf: [String] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for grouping in ReportGrouping.allCases {
            let report = ["report", "--rules", rules, "--by", grouping.rawValue, "--format", "json"] + asOf
            let fleetReport = try fleet(report, centrals)
            #expect(fleetReport.status == 0, sourceLocation: sourceLocation)
            #expect(
                fleetReport.output == (try CLI.run(report + ["--db", single.databasePath])).output, "\(grouping)",
                sourceLocation: sourceLocation)
        }
        #expect(users.count >= 4, sourceLocation: sourceLocation)
        for user in users {
            let explain = ["explain", "--rules", rules, "--user", user, "--format", "json"] + asOf
            let fromFleet = try fleet(explain, centrals).output
            let fromOne = try CLI.run(explain + ["--db", single.databasePath]).output
            #expect(fromFleet == fromOne, "explain \(user): \(fromFleet) vs \(fromOne)", sourceLocation: sourceLocation)
        }
        let verify = try fleet(["verify", "--rules", rules], centrals)
        #expect(
            verify.status == 0 && verify.output.contains("ok: every user's records are in one journal"),
            "\(verify.output)", sourceLocation: sourceLocation)
    }
}
