import Foundation
import Posix
import TestSupport
import Testing

/// monitoring/alerts.yml, its promtool unit tests, and monitoring/dashboard.json, checked against what really
/// exists: the metrics a live edge and a live central daemon serve, and the textfiles the nightly scripts write.
@Suite struct MonitoringTests {
    static let alerts = Repository.file("monitoring/alerts.yml")

    @Test func promtoolChecksTheRulesAndTheirUnitTestsPass() throws {
        let check = try Shell.run("/usr/bin/promtool", ["check", "rules", Self.alerts])
        #expect(check.status == 0, "\(check.output)")
        let test = try Shell.run("/usr/bin/promtool", ["test", "rules", Repository.file("monitoring/alerts_test.yml")])
        #expect(test.status == 0, "\(test.output)")
    }

    /// Every alert has a summary and a runbook line naming an entry of docs/monitoring.md's runbook, and the unit
    /// tests make each one fire at least once and stay silent at least once.
    @Test func everyAlertIsDocumentedAndTestedFiringAndSilent() throws {
        let rules = try String(contentsOfFile: Self.alerts, encoding: .utf8)
        let names = Self.values(of: "alert", in: rules)
        #expect(names.count >= 8, "\(names)")
        #expect(Self.values(of: "summary", in: rules).count == names.count)
        let runbooks = Self.values(of: "runbook", in: rules)
        #expect(runbooks.count == names.count)
        let manual = try String(contentsOfFile: Repository.file("docs/monitoring.md"), encoding: .utf8)
        #expect(manual.contains("## Alerts and dashboard") && manual.contains("### Runbook"))
        for runbook in runbooks {
            let section = runbook.split(separator: ",").dropFirst(2).first.map {
                String($0.trimmingCharacters(in: .whitespaces).split(separator: " ")[0].split(separator: ";")[0])
            }
            #expect(section.map { manual.contains("- `\($0)` — ") } == true, "no runbook entry for \(runbook)")
        }
        // In alerts_test.yml, each `alertname: X` is followed by `exp_alerts: []` (silent) or a list (firing).
        let tests = try String(contentsOfFile: Repository.file("monitoring/alerts_test.yml"), encoding: .utf8)
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        var fired: Set<String> = []
        var silent: Set<String> = []
        for (index, line) in tests.enumerated() where line.hasPrefix("alertname: ") && index + 1 < tests.count {
            let name = String(line.dropFirst("alertname: ".count))
            if tests[index + 1] == "exp_alerts: []" { silent.insert(name) } else { fired.insert(name) }
        }
        for name in Set(names) {
            #expect(fired.contains(name), "\(name) never fires in alerts_test.yml")
            #expect(silent.contains(name), "\(name) is never checked silent in alerts_test.yml")
        }
    }

    /// The values of `key:` lines (YAML scalars, quotes removed), in file order.
    static func values(of key: String, in text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            var trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("- ") { trimmed.removeFirst(2) }
            guard trimmed.hasPrefix("\(key): ") else { return nil }
            return String(trimmed.dropFirst(key.count + 2)).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
    }

    /// Every `offertrack_…` name in `text`.
    static func metricNames(in text: String) -> Set<String> {
        var names: Set<String> = []
        var rest = Substring(text)
        while let start = rest.range(of: "offertrack_") {
            let name = rest[start.lowerBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            names.insert(String(name))
            rest = rest[name.endIndex...]
        }
        return names
    }

    /// Every string under the keys `expr` (panels' targets) and `definition` (query variables) in the dashboard.
    static func queries(in object: Any) -> [String] {
        if let dictionary = object as? [String: Any] {
            return dictionary.flatMap { key, value -> [String] in
                if key == "expr" || key == "definition", let query = value as? String { return [query] }
                return queries(in: value)
            }
        }
        if let array = object as? [Any] { return array.flatMap { queries(in: $0) } }
        return []
    }

    /// The sample names of an exposition (labels and values cut off; comments skipped).
    static func sampleNames(_ exposition: String) -> Set<String> {
        Set(
            exposition.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap {
                $0.split(whereSeparator: { $0 == "{" || $0 == " " }).first.map(String.init)
            })
    }

    @Test func theDashboardAndTheAlertsOnlyNameMetricsThatExist() throws {
        let directory = ScratchDirectory()
        let exported = try Self.liveMetricNames(in: directory)
        // What each source contributes, so a source that stops working is seen as such.
        for name in [
            "offertrack_records_total", "offertrack_ack_latency_seconds_bucket", "offertrack_forward_lag_records",
            "offertrack_consume_lag_records", "offertrack_start_time_seconds",
            "offertrack_export_last_success_timestamp_seconds", "offertrack_backup_last_success_timestamp_seconds",
            "offertrack_payouts_last_success_timestamp_seconds", "offertrack_payouts_next_due_timestamp_seconds",
        ] {
            #expect(exported.contains(name), "\(name) not exported; got \(exported.sorted())")
        }

        let data = try Data(contentsOf: URL(fileURLWithPath: Repository.file("monitoring/dashboard.json")))
        let dashboard = try JSONSerialization.jsonObject(with: data)
        let dashboardQueries = Self.queries(in: dashboard)
        #expect(dashboardQueries.count >= 15)
        let rules = try String(contentsOfFile: Self.alerts, encoding: .utf8)
        let alertQueries = Self.values(of: "expr", in: rules)
        #expect(alertQueries.count == Self.values(of: "alert", in: rules).count)
        for query in dashboardQueries + alertQueries {
            let names = Self.metricNames(in: query)
            #expect(!names.isEmpty, "a query without an offertrack metric: \(query)")
            for name in names { #expect(exported.contains(name), "\(name) is not exported (in \(query))") }
        }
        // The issue's panels: ingest by status, rejections by code, ack latency quantiles, commit sizes, queue
        // depth, connections, fleet lags.
        let all = dashboardQueries.joined(separator: "\n")
        for needle in [
            "sum by (status) (rate(offertrack_records_total", "sum by (code) (rate(offertrack_rejections_total",
            "histogram_quantile(0.99, sum by (le) (rate(offertrack_ack_latency_seconds_bucket",
            "offertrack_commit_records_bucket", "offertrack_queued_records", "offertrack_connections",
            "offertrack_forward_lag_records", "offertrack_consume_lag_records",
        ] {
            #expect(all.contains(needle), "the dashboard has no \(needle)")
        }
    }

    /// Sample names scraped from a live edge and a live central daemon (a real nats-server between them), and
    /// those of the textfiles the real nightly backup and export scripts write.
    static func liveMetricNames(in directory: ScratchDirectory) throws -> Set<String> {
        let server = try NATSServer(in: directory)
        let rules = Repository.file("systemd/rules.example.json")
        let common = ["--partitions-total", "4", "--stream-replicas", "1", "--rules", rules]
        let edgePort = try LoopbackPorts.ephemeral()
        let edge = try DaemonProcess(
            in: ScratchDirectory("ot-edge"),
            arguments: ["--forward", server.url, "--metrics-listen", "127.0.0.1:\(edgePort)"] + common)
        let centralPort = try LoopbackPorts.ephemeral()
        let central = try DaemonProcess(
            in: ScratchDirectory("ot-central"),
            arguments: ["--consume", server.url, "--partitions", "0-3", "--metrics-listen", "127.0.0.1:\(centralPort)"]
                + common)
        guard edge.waitReady(), central.waitReady() else { return [] }
        _ = try LineClient(path: edge.socketPath).exchange(TestRecords.stream(prefix: "mon", count: 20))
        var names: Set<String> = []
        for port in [edgePort, centralPort] {
            let scrape = try Curl.run(["http://127.0.0.1:\(port)/metrics"])
            #expect(scrape.status == 0, "\(scrape.output)")
            names.formUnion(Self.sampleNames(scrape.output))
        }

        // The nightly scripts, as the units run them but on this build, with the textfile directory set.
        let textfiles = directory.file("textfiles")
        try FileManager.default.createDirectory(atPath: textfiles, withIntermediateDirectories: true)
        let environment = ["PATH": "/usr/bin:/bin", "OFFERTRACK": Binaries.cli, "OFFERTRACK_TEXTFILE_DIR": textfiles]
        let before = Date().timeIntervalSince1970.rounded(.down)
        let backups = directory.file("backups")
        let exports = directory.file("exports")
        for path in [backups, exports] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        let backup = try Shell.run(
            Repository.file("scripts/offertrack-backup-nightly"),
            ["--out", backups, "--db", central.databasePath, "--rules", rules], environment: environment)
        #expect(backup.status == 0, "\(backup.output)")
        // An edge's journal keeps no attribution; its nightly backup verifies all the same (verify skips the
        // comparison with a recomputation and says so).
        let edgeBackups = directory.file("edge-backups")
        try FileManager.default.createDirectory(atPath: edgeBackups, withIntermediateDirectories: true)
        let edgeBackup = try Shell.run(
            Repository.file("scripts/offertrack-backup-nightly"),
            ["--out", edgeBackups, "--db", edge.databasePath, "--rules", rules],
            environment: ["PATH": "/usr/bin:/bin", "OFFERTRACK": Binaries.cli])
        #expect(edgeBackup.status == 0 && edgeBackup.output.contains("backed up and verified"), "\(edgeBackup.output)")
        let export = try Shell.run(
            Repository.file("scripts/offertrack-export-catchup"),
            ["--out", exports, "--db", central.databasePath, "--rules", rules], environment: environment)
        #expect(export.status == 0, "\(export.output)")
        // The payouts after the export: a month is due whether or not one was published.
        let payouts = try Shell.run(
            Repository.file("scripts/offertrack-payouts-catchup"),
            ["--out", exports, "--db", central.databasePath, "--rules", rules], environment: environment)
        #expect(payouts.status == 0, "\(payouts.output)")
        let after = Date().timeIntervalSince1970
        for job in ["backup", "export", "payouts"] {
            let file = "\(textfiles)/offertrack-\(job).prom"
            let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            let check = try Shell.run("/bin/sh", ["-c", "/usr/bin/promtool check metrics < \(file)"])
            #expect(check.status == 0, "promtool on \(file): \(check.output)")
            let stamp =
                MetricsScrape.value(text, "offertrack_\(job)_last_success_timestamp_seconds")
                .flatMap(Double.init) ?? 0
            #expect(stamp >= before && stamp <= after, "\(job): \(text)")
            names.formUnion(Self.sampleNames(text))
        }
        // Only .prom files are left for the collector (the temporary file was renamed).
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: textfiles).sorted() == [
                "offertrack-backup.prom", "offertrack-export.prom", "offertrack-payouts.prom",
            ])
        DaemonProcess.terminateCleanly([edge, central])
        return names
    }

    /// A textfile directory that cannot be written does not fail the job that succeeded: a warning only.
    @Test func anUnwritableTextfileDirectoryOnlyWarns() throws {
        let directory = ScratchDirectory()
        let outcome = try Shell.run(
            Repository.file("scripts/offertrack-textfile"), ["export"],
            environment: ["PATH": "/usr/bin:/bin", "OFFERTRACK_TEXTFILE_DIR": directory.file("missing")])
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(outcome.output.contains("cannot write"), "\(outcome.output)")
        let unset = try Shell.run(Repository.file("scripts/offertrack-textfile"), ["export"], environment: [:])
        #expect(unset.status == 0 && unset.output.isEmpty, "\(unset.output)")
        #expect(try Shell.run(Repository.file("scripts/offertrack-textfile"), ["Bad"]).status == 64)
    }

    /// A backup that does not verify fails the nightly script with verify's exit code, prunes nothing and leaves
    /// the success timestamp alone (so OfferTrackBackupNotRun fires). The journal's records were deleted behind
    /// the daemon's back, so its derived presentations name records that are not there.
    @Test func aBackupThatDoesNotVerifyFailsAndLeavesTheTimestamp() throws {
        let directory = ScratchDirectory()
        let daemon = try DaemonProcess(in: directory)
        guard daemon.waitReady() else { return }
        _ = try LineClient(path: daemon.socketPath).exchange(TestRecords.stream(prefix: "nv", count: 5))
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
        let tamper = try Shell.run("/usr/bin/sqlite3", [daemon.databasePath, "DELETE FROM records"])
        #expect(tamper.status == 0, "\(tamper.output)")
        let backups = directory.file("backups")
        let textfiles = directory.file("textfiles")
        for path in [backups, textfiles] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        let old = "\(backups)/offertrack-2026-01-01T004500Z.db"
        _ = FileManager.default.createFile(atPath: old, contents: Data("old".utf8))
        let outcome = try Shell.run(
            Repository.file("scripts/offertrack-backup-nightly"),
            ["--out", backups, "--keep", "1", "--db", daemon.databasePath],
            environment: ["PATH": "/usr/bin:/bin", "OFFERTRACK": Binaries.cli, "OFFERTRACK_TEXTFILE_DIR": textfiles])
        #expect(outcome.status == 65, "\(outcome.output)")
        #expect(outcome.output.contains("does not verify (exit 65)"), "\(outcome.output)")
        #expect(FileManager.default.fileExists(atPath: old))
        #expect(try FileManager.default.contentsOfDirectory(atPath: textfiles).isEmpty)
    }
}
