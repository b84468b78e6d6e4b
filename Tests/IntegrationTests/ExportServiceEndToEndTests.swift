import Foundation
import JSON
import OfferTrackDomain
import OutputFormats
import Posix
import Simulator
import TestSupport
import Testing
import WireFormat

/// Issue 6's end-to-end run: the daemon through systemd-socket-activate with offertrackd.service's own
/// ExecStart flags, a simulated day ingested, offertrack-export.service's own command run, the files checked.
@Suite struct ExportServiceEndToEndTests {
    @Test func aSimulatedDayIsExportedByTheExportServicesOwnCommand() throws {
        let directory = ScratchDirectory("ot-e2e")
        let state = directory.file("state")
        let out = directory.file("exports")
        let etc = directory.file("etc")
        for path in [state, out, etc] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        let rules = "\(etc)/rules.json"
        try FileManager.default.copyItem(atPath: Repository.file("systemd/rules.example.json"), toPath: rules)

        // offertrackd.service's command line with this build's binary, the test's /etc and a numeric group.
        let socketUnit = try UnitFile("offertrackd.socket")
        var daemonCommand = try #require(try UnitFile("offertrackd.service").command("ExecStart"))
        daemonCommand[0] = Binaries.daemon
        // The writers' and reviewers' groups (sysusers.d's, absent on this machine) as numbers.
        daemonCommand = daemonCommand.map { word in
            if word == socketUnit.value("SocketGroup") { return "4242" }
            if word == "offertrack-reviewers" { return "4243" }
            return word.replacingOccurrences(of: "/etc/offertrack/", with: "\(etc)/")
        }
        let notify = try NotifyListener(in: directory)
        let socketPath = directory.file("offertrack.sock")
        let daemon = try SpawnedProcess(
            ["/usr/bin/systemd-socket-activate", "-l", socketPath, "-E", "NOTIFY_SOCKET", "-E", "STATE_DIRECTORY"]
                + daemonCommand,
            environment: ["NOTIFY_SOCKET": notify.path, "STATE_DIRECTORY": state],
            stderrPath: directory.file("daemon.log"))
        // Listening (the launcher binds before it listens); this first connection starts the daemon and ends.
        _ = try LineClient.connectWhenListening(path: socketPath)

        // The example rules hold commissions for 45 days (rule 4.6): the conversions of the day 45 days before
        // yesterday (UTC) qualify yesterday. That day is simulated and ingested through the CLI.
        let today = Clock.wallMilliseconds() / Timestamp.millisecondsPerDay * Timestamp.millisecondsPerDay
        let yesterday = Timestamp.formatDay(today - Timestamp.millisecondsPerDay)
        let converted = today - 46 * Timestamp.millisecondsPerDay
        let workload = directory.file("day.ndjson")
        let simulated = Array(
            WorkloadSimulator(users: 300, seed: 5, start: converted, days: 1).lines.map { $0 + "\n" }.joined().utf8)
        try Data(simulated).write(to: URL(fileURLWithPath: workload))
        let environment = ["PATH": "/usr/bin:/bin", "STATE_DIRECTORY": state, "OFFERTRACK": Binaries.cli]
        let ingest = try Shell.run(
            Binaries.cli, ["ingest", workload, "--socket", socketPath], environment: environment)
        #expect(ingest.status == 0 && ingest.output.contains("rejected 0"), "\(ingest.output)")
        #expect(notify.waitFor(line: "READY=1") != nil)

        // offertrack-export.service's own command, with the test's paths.
        var exportCommand = try #require(try UnitFile("offertrack-export.service").command("ExecStart"))
        exportCommand[0] = Repository.file("scripts/offertrack-export-catchup")
        exportCommand = exportCommand.map {
            $0.replacingOccurrences(of: "/var/lib/offertrack-exports", with: out)
                .replacingOccurrences(of: "/etc/offertrack/", with: "\(etc)/")
        }
        // The day is passed, not left to the script's default: a UTC midnight during the test must not change it.
        exportCommand += ["--until", yesterday]
        let export = try Shell.run(exportCommand[0], Array(exportCommand.dropFirst()), environment: environment)
        #expect(export.status == 0, "\(export.output)")

        // The files: the manifest describes the CSV exactly, and the money equals the report's for that day.
        let csv = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(out)/commissions-\(yesterday).csv")))
        let manifestBytes = try [UInt8](
            Data(contentsOf: URL(fileURLWithPath: "\(out)/commissions-\(yesterday).manifest.json")))
        guard case .object(let manifest) = try JSONParser.parse(manifestBytes) else {
            Issue.record("the manifest is not a JSON object")
            return
        }
        let lines = String(decoding: csv, as: UTF8.self).split(separator: "\n")
        #expect(lines.first == Substring(ExportPlan.header.joined(separator: ",")))
        #expect(lines.count > 10, "a simulated day of 300 users should earn commissions")
        #expect(manifest["sha256"] == .string(SHA256.hex(of: csv)))
        let rulesBytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: rules)))
        #expect(manifest["rulesSha256"] == .string(SHA256.hex(of: rulesBytes)))
        #expect(manifest["rows"] == .number(JSONNumber(literal: String(lines.count - 1))))
        #expect(manifest["date"] == .string(yesterday))
        let amounts = lines.dropFirst().map { line -> Int64 in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            return Int64(fields[fields.count - 3]) ?? -1
        }
        let report = try Shell.run(
            Binaries.cli,
            [
                "report", "--by", "day", "--since", Timestamp.formatDay(converted), "--until",
                Timestamp.formatDay(converted + Timestamp.millisecondsPerDay), "--format", "json", "--rules", rules,
            ],
            environment: environment)
        guard case .array(let rows) = try JSONParser.parse(Array(report.output.utf8)),
            case .object(let row)? = rows.first, case .number(let commission)? = row["commissionMinor"]
        else {
            Issue.record("unexpected report: \(report.output)")
            return
        }
        #expect(amounts.reduce(0, +) == commission.int64Value)
        #expect(manifest["commissionMinor"] == .number(commission))

        // Running the service again publishes nothing new and leaves the files as they were.
        #expect(try Shell.run(exportCommand[0], Array(exportCommand.dropFirst()), environment: environment).status == 0)
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(out)/commissions-\(yesterday).csv"))) == csv)
        Signals.send(Signals.terminate, to: daemon.pid)
        #expect(daemon.waitExit(timeout: 10) == 0)
    }
}
