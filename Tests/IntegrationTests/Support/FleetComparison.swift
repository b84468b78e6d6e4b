import Foundation
import OfferTrackDomain
import TestSupport
import Testing
import WireFormat

/// A fleet's central journals checked against one daemon that ingested the same records: every command answers
/// the same.
enum FleetComparison {
    /// `offertrack` run with `arguments` and a bare `PATH`.
    private static func cli(_ arguments: [String]) throws -> Shell.Outcome {
        try Shell.run(Binaries.cli, arguments, environment: ["PATH": "/usr/bin:/bin"])
    }

    /// Reports, explanations, verify and the export over the central journals read as one equal those of one
    /// daemon that ingested the same records.
    static func withASingleDaemon(
        centrals: [DaemonProcess], lines: [String], rules: String, in directory: ScratchDirectory
    ) throws {
        let single = try DaemonProcess(
            in: ScratchDirectory("ot-single"), arguments: ["--rules", rules])
        guard single.waitReady() else { return }
        _ = try LineClient(path: single.socketPath).exchange(lines)
        // The same lines journaled, a forgotten person's renamed the same way in both.
        #expect(
            try centrals.flatMap { try JournalInspector.lines(of: $0.databasePath) }.sorted()
                == (try JournalInspector.lines(of: single.databasePath)).sorted())
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
}
