import Foundation
import OfferTrackDomain
import OutputFormats
import Posix
import SQLite
import Simulator
import TestSupport
import Testing
import WireFormat

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

    /// Each daemon's status and the tails of its logs (all of its directory's, restarts included), and the
    /// tails of the stream nodes' logs in `directory`: what a fleet that did not settle was doing.
    static func diagnosis(_ daemons: [DaemonProcess], in directory: ScratchDirectory) -> String {
        func tail(_ path: String) -> String {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").suffix(25).joined(separator: "\n")
        }
        func logs(in path: String, prefix: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
                .filter { $0.hasPrefix(prefix) && $0.hasSuffix(".log") }.sorted().map { "\(path)/\($0)" }
        }
        var parts: [String] = []
        for daemon in daemons {
            parts.append("== \(daemon.databasePath): \((try? status(daemon)) ?? "no status")")
            let directory = (daemon.databasePath as NSString).deletingLastPathComponent
            parts += logs(in: directory, prefix: "daemon-").map { "-- \($0)\n\(tail($0))" }
        }
        parts += logs(in: directory.path, prefix: "nats-").map { "-- \($0)\n\(tail($0))" }
        // A stream server whose store's disk filled up answers nothing and logs nothing (StreamServersOutOfDiskTests).
        let free = (try? FileManager.default.attributesOfFileSystem(forPath: directory.path))?[.systemFreeSize]
        parts.append("free space under \(directory.path): \(((free as? NSNumber)?.int64Value ?? -1) >> 20) MiB")
        return parts.joined(separator: "\n")
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
        // The same lines journaled, a forgotten person's renamed the same way in both.
        #expect(
            try centrals.flatMap { try Self.lines(of: $0.databasePath) }.sorted()
                == (try Self.lines(of: single.databasePath)).sorted())
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
        #expect(partial.status == 65 && partial.output.contains("are the same journal"), "\(partial.output)")
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
        let lines = Array(
            WorkloadSimulator(users: 200, seed: 14).filter { !$0.isDuplicate }.map(\.line)
        )
        #expect(try LineClient(path: edge.socketPath).exchange(lines).allSatisfy { $0.status == "accepted" })
        let deadline = Date().addingTimeInterval(60)
        var held: [[String]] = []
        while Date() < deadline {
            held = try centrals.map { try Self.lines(of: $0.databasePath) }
            if held.map(\.count).reduce(0, +) >= lines.count { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        // Every record once, in the journal of its user's partition (a forgotten person's under their new name:
        // the simulated traffic has erasures; `compareWithASingleDaemon` compares the lines with one daemon's).
        #expect(held.map(\.count).reduce(0, +) == lines.count)
        #expect(lines.contains { $0.contains(#""type":"erasure""#) })
        for (index, journal) in held.enumerated() {
            let allowed = index == 0 ? [0, 1] : [2, 3]
            for line in journal {
                guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)),
                    !record.user.hasPrefix(Erasure.namePrefix)
                else { continue }
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
                refused.status == 78
                    && (refused.output.contains("this journal holds partitions 0,1 of 4")
                        || refused.output.contains("the fleet of stream OFFERTRACK with --partitions-total 4")),
                "\(refused.output)")
        }
        edge.signal(Signals.terminate)
        #expect(edge.waitExit() == 0)
    }
}

extension FleetEndToEndTests {
    /// Two edges, two central daemons (started first) and a three-node JetStream cluster (R3, `max_file_store:
    /// 2GB`, default stream flags), with faults between batches of
    /// traffic: `kill -9` of an edge and of a central daemon, each stream node killed and restarted in turn,
    /// and the whole stream down while the edges keep acknowledging. Once the lags are 0, the central journals
    /// hold every record an edge acknowledged, each once and verbatim.
    @Test func throughKillsAndOutagesEveryAcknowledgedRecordIsInOneCentralJournalOnce() throws {
        let directory = ScratchDirectory()
        // As operators run it: servers allowed 2 GB of file storage each, and the daemons' default stream flags
        // (3 replicas, the size the cluster can place).
        let cluster = try NATSCluster(in: directory, maxFileStore: "2GB")
        let servers = cluster.urls.joined(separator: ",")
        let rulesPath = directory.file("rules.json")
        try Self.rules.write(toFile: rulesPath, atomically: true, encoding: .utf8)
        let common = ["--partitions-total", "4", "--rules", rulesPath]
        let edgeDirectories = [ScratchDirectory("ot-edge-a"), ScratchDirectory("ot-edge-b")]
        let centralDirectories = [ScratchDirectory("ot-central-a"), ScratchDirectory("ot-central-b")]
        let partitions = ["0-1", "2-3"]
        // A restarted daemon reuses its directory's notification socket.
        let edgeNotify = try edgeDirectories.map { try NotifyListener(in: $0) }
        let centralNotify = try centralDirectories.map { try NotifyListener(in: $0) }
        func edge(_ index: Int) throws -> DaemonProcess {
            edgeNotify[index].reset()
            return try DaemonProcess(
                in: edgeDirectories[index], arguments: ["--forward", servers] + common, notify: edgeNotify[index])
        }
        func central(_ index: Int) throws -> DaemonProcess {
            centralNotify[index].reset()
            return try DaemonProcess(
                in: centralDirectories[index],
                arguments: ["--consume", servers, "--partitions", partitions[index]] + common,
                notify: centralNotify[index])
        }
        // Central daemons first (they create the stream), then the edges.
        var centrals = try [central(0), central(1)]
        guard centrals.allSatisfy({ $0.waitReady() }) else { return }
        var edges = try [edge(0), edge(1)]
        guard edges.allSatisfy({ $0.waitReady() }) else { return }
        let lines = Array(
            WorkloadSimulator(users: 500, seed: 15).filter { !$0.isDuplicate && $0.record.type != .erasure }.map(\.line)
        )
        let chunks = stride(from: 0, to: lines.count, by: 150).map { Array(lines[$0..<min(lines.count, $0 + 150)]) }
        var acknowledged: [String] = []
        for (number, chunk) in chunks.enumerated() {
            let target = edges[number % 2]
            let answers = try LineClient(path: target.socketPath).exchange(chunk)
            #expect(answers.count == chunk.count && answers.allSatisfy { $0.status == "accepted" }, "chunk \(number)")
            acknowledged += chunk
            switch number {
            case 1:  // an edge dies with records not yet forwarded
                edges[0].kill()
                edges[0] = try edge(0)
                #expect(edges[0].waitReady())
            case 3:  // a central daemon dies between a commit and its acknowledgements, or mid-batch
                centrals[0].kill()
                centrals[0] = try central(0)
                #expect(centrals[0].waitReady())
            case 5: cluster.nodes[0].stop()
            case 6:
                try cluster.nodes[0].start()
                cluster.nodes[1].stop()
            case 7:
                try cluster.nodes[1].start()
                cluster.nodes[2].stop()
            case 8:
                try cluster.nodes[2].start()
                // The whole stream down: the edges keep acknowledging, the records wait in their journals.
                for node in cluster.nodes { node.stop() }
            case 10:
                for node in cluster.nodes { try node.start() }
            default: break
            }
        }
        let deadline = Date().addingTimeInterval(120)
        var held: [String] = []
        while Date() < deadline {
            held = try centrals.flatMap { try Self.lines(of: $0.databasePath) }
            if held.count >= acknowledged.count { break }
            Thread.sleep(forTimeInterval: 0.2)
        }
        // Redeliveries (a killed central's unacknowledged batches) may still come, as duplicates: every lag 0 first.
        var settled = false
        while !settled {
            settled = try (edges + centrals).allSatisfy { try Self.status($0).contains(#""lagRecords":0,"#) }
            if settled || Date() >= deadline { break }
            Thread.sleep(forTimeInterval: 0.2)
        }
        if !settled {
            Issue.record("the fleet did not settle in 120 s\n\(Self.diagnosis(edges + centrals, in: directory))")
        }
        held = try centrals.flatMap { try Self.lines(of: $0.databasePath) }
        #expect(
            held.count == acknowledged.count, "\(held.count) journaled centrally, \(acknowledged.count) acknowledged")
        #expect(held.sorted() == acknowledged.sorted())
        // Each record in the central journal of its user's partition: one published on the wrong subject (or
        // consumed by the wrong central) fails here, where the journals' UNIQUE ids cannot hide it.
        for (index, central) in centrals.enumerated() {
            let owned = index == 0 ? 0...1 : 2...3
            let stray = try Self.lines(of: central.databasePath).filter { line in
                guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else { return true }
                return !owned.contains(Partition.of(user: record.user, total: 4))
            }
            #expect(stray.isEmpty, "central \(index) (partitions \(owned)) holds \(stray.count) records of others")
        }
        // Reports, explanations, verify and the export over the central journals equal a single daemon's.
        try Self.compareWithASingleDaemon(centrals: centrals, lines: acknowledged, rules: rulesPath, in: directory)
        for daemon in edges + centrals {
            let status = try Self.status(daemon)
            #expect(status.contains(#""lagRecords":0,"#), "\(status)")
            daemon.signal(Signals.terminate)
            #expect(daemon.waitExit() == 0)
        }
    }
}
