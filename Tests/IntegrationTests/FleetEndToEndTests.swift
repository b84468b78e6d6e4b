import Foundation
import OfferTrackDomain
import Posix
import SQLite
import Testing

/// Edge and central daemons over a real nats-server (SPEC section 10): records acknowledged by an edge end up,
/// once and verbatim, in the central journal of their partition; a central journal keeps its partitions.
@Suite(.serialized) struct FleetEndToEndTests {
    static func status(_ daemon: DaemonProcess) throws -> String {
        try Shell.run(
            Binaries.cli, ["status", "--db", daemon.databasePath, "--socket", daemon.socketPath, "--format", "json"]
        ).output
    }

    static func lines(of path: String) throws -> [String] {
        let connection = try Connection(path: path, mode: .readOnly)
        let statement = try connection.prepare("SELECT line FROM records")
        defer { statement.reset() }
        var lines: [String] = []
        while try statement.step() { lines.append(statement.text(0) ?? "") }
        return lines
    }

    static let rules = #"{"currency":"USD","holdingPeriodHours":24,"rules":[{"affiliateToken":"*","amountMinor":300}]}"#

    static func cli(_ arguments: [String]) throws -> Shell.Outcome {
        try Shell.run(Binaries.cli, arguments, environment: ["PATH": "/usr/bin:/bin"])
    }

    /// Reports, explanations, verify and the export over the central journals read as one equal those of one
    /// daemon that ingested the same records.
    static func compareWithASingleDaemon(
        centrals: [DaemonProcess], lines: [String], rules: String, in directory: ScratchDirectory
    ) throws {
        let single = try DaemonProcess(
            in: ScratchDirectory("ot-single"), arguments: ["--rules", rules])
        guard single.waitReady() else { return }
        _ = try LineClient(path: single.socketPath).exchange(lines)
        let several = centrals.flatMap { ["--db", $0.databasePath] }
        let one = ["--db", single.databasePath]
        for grouping in ReportGrouping.allCases {
            let arguments = [
                "report", "--rules", rules, "--by", grouping.rawValue, "--format", "json", "--as-of", "2026-11-02",
            ]
            let fleet = try cli(arguments + several)
            #expect(fleet.status == 0 && fleet.output.contains(#""conversions":"#), "\(fleet.output)")
            #expect(fleet.output == (try cli(arguments + one)).output, "report by \(grouping)")
        }
        let users = lines.prefix(40).compactMap { line -> String? in
            guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else { return nil }
            return record.user
        }
        for user in Set(users) {
            let arguments = ["explain", "--rules", rules, "--user", user, "--format", "json", "--as-of", "2026-11-02"]
            #expect(try cli(arguments + several).output == (try cli(arguments + one)).output, "explain \(user)")
        }
        let verify = try cli(["verify", "--rules", rules] + several)
        #expect(
            verify.status == 0 && verify.output.contains("ok: every user's records are in one journal"),
            "\(verify.output)")
        // The export: every central journal publishes the day, one file holds their rows, as one daemon's file.
        let outFleet = directory.file("out-fleet")
        let outOne = directory.file("out-one")
        for path in [outFleet, outOne] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        let day = "2026-11-02"
        let partial = try cli([
            "export", "--rules", rules, "--date", day, "--out", outFleet, "--db", centrals[0].databasePath, "--db",
            centrals[0].databasePath,
        ])
        #expect(partial.status == 65 && partial.output.contains("partition 0 is in both"), "\(partial.output)")
        let missing = try cli([
            "export", "--rules", rules, "--date", day, "--out", outFleet, "--db", centrals[1].databasePath, "--db",
            single.databasePath,
        ])
        #expect(missing.status == 65, "\(missing.output)")
        #expect(try cli(["export", "--rules", rules, "--date", day, "--out", outFleet] + several).status == 0)
        #expect(try cli(["export", "--rules", rules, "--date", day, "--out", outOne] + one).status == 0)
        let fleetCSV = try Data(contentsOf: URL(fileURLWithPath: "\(outFleet)/commissions-\(day).csv"))
        let oneCSV = try Data(contentsOf: URL(fileURLWithPath: "\(outOne)/commissions-\(day).csv"))
        #expect(fleetCSV == oneCSV && fleetCSV.count > 200, "\(fleetCSV.count) bytes")
        let manifest = { (path: String) throws -> String in
            try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: ",\"generatedAt\"")[0]
        }
        #expect(
            try manifest("\(outFleet)/commissions-\(day).manifest.json")
                == (try manifest("\(outOne)/commissions-\(day).manifest.json")))
        // Rewriting the published day gives the same bytes.
        let firstManifest = try Data(contentsOf: URL(fileURLWithPath: "\(outFleet)/commissions-\(day).manifest.json"))
        #expect(try cli(["export", "--rules", rules, "--date", day, "--out", outFleet] + several).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(outFleet)/commissions-\(day).csv")) == fleetCSV)
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: "\(outFleet)/commissions-\(day).manifest.json")) == firstManifest)
        single.signal(Signals.terminate)
        #expect(single.waitExit() == 0)
    }

    @Test func anEdgesRecordsReachTheCentralJournalsOfTheirPartitions() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        let rulesPath = directory.file("rules.json")
        try Self.rules.write(toFile: rulesPath, atomically: true, encoding: .utf8)
        let common = ["--partitions-total", "4", "--stream-replicas", "1", "--rules", rulesPath]
        let edgeDirectory = ScratchDirectory("ot-edge")
        let edge = try DaemonProcess(in: edgeDirectory, arguments: ["--forward", server.url] + common)
        let centrals = try [("0-1", "ot-central-a"), ("2,3", "ot-central-b")].map { partitions, label in
            try DaemonProcess(
                in: ScratchDirectory(label), arguments: ["--consume", server.url, "--partitions", partitions] + common)
        }
        guard edge.waitReady(), centrals.allSatisfy({ $0.waitReady() }) else { return }
        let lines = Array(WorkloadSimulator(users: 200, seed: 14).filter { !$0.isDuplicate }.map(\.line))
        #expect(try LineClient(path: edge.socketPath).exchange(lines).allSatisfy { $0.status == "accepted" })
        let deadline = Date().addingTimeInterval(60)
        var held: [[String]] = []
        while Date() < deadline {
            held = try centrals.map { try Self.lines(of: $0.databasePath) }
            if held.map(\.count).reduce(0, +) >= lines.count { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        // Every record once, verbatim, in the journal of its user's partition.
        #expect(held.flatMap { $0 }.sorted() == lines.sorted())
        for (index, journal) in held.enumerated() {
            let allowed = index == 0 ? [0, 1] : [2, 3]
            for line in journal {
                guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else { continue }
                #expect(allowed.contains(Partition.of(user: record.user, total: 4)))
            }
        }
        #expect(try Self.status(centrals[0]).contains(#""consume":{"partitions":[0,1],"partitionsTotal":4,"#))
        try Self.compareWithASingleDaemon(centrals: centrals, lines: lines, rules: rulesPath, in: directory)
        for central in centrals {
            central.signal(Signals.terminate)
            #expect(central.waitExit() == 0)
        }
        // A central journal refuses other partitions, or another P.
        for other in [
            ["--partitions", "0-2", "--partitions-total", "4"], ["--partitions", "0-1", "--partitions-total", "8"],
        ] {
            let refused = try Shell.run(
                Binaries.daemon,
                ["--consume", server.url, "--db", centrals[0].databasePath, "--socket", directory.file("x.sock")]
                    + other)
            #expect(
                refused.status == 78 && refused.output.contains("this journal holds partitions 0,1 of 4"),
                "\(refused.output)")
        }
        edge.signal(Signals.terminate)
        #expect(edge.waitExit() == 0)
    }
}
