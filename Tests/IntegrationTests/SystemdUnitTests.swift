import Foundation
import Posix
import TestSupport
import Testing

/// The units in `systemd/`, checked offline with systemd's own tools (systemd is not PID 1 here).
@Suite struct SystemdUnitTests {
    /// Copies the units into `directory` with the installed paths pointed at this build: `systemd-analyze
    /// verify` checks that every ExecStart= binary exists and is executable, and the package is not installed
    /// here. Every `/usr/lib/offertrack/NAME` helper is `scripts/NAME` in the checkout.
    static func installedForTest(in directory: ScratchDirectory) throws -> [String] {
        return try UnitFile.names.map { name in
            let path = directory.file(name)
            try pointedAtThisBuild(UnitFile(name).text).write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
    }

    /// `text` with the package's install paths (`/usr/bin/offertrack…`, `/usr/lib/offertrack/…`) replaced by
    /// this build's binaries and the checkout's scripts.
    static func pointedAtThisBuild(_ text: String) -> String {
        text.replacingOccurrences(of: "/usr/bin/offertrackd ", with: "\(Binaries.daemon) ")
            .replacingOccurrences(of: "/usr/bin/offertrack ", with: "\(Binaries.cli) ")
            .replacingOccurrences(of: "/usr/lib/offertrack/", with: Repository.file("scripts/"))
    }

    @Test func verifyIsCleanOnEveryUnit() throws {
        let directory = ScratchDirectory()
        let paths = try Self.installedForTest(in: directory)
        let outcome = try Shell.run("/usr/bin/systemd-analyze", ["verify"] + paths)
        #expect(outcome.status == 0, "\(outcome.output)")
        for name in UnitFile.names {
            #expect(!outcome.output.contains(name), "systemd-analyze verify: \(outcome.output)")
        }
    }

    /// As shipped, the only complaint is the not-yet-installed executables, nothing about the units.
    @Test func verifyOnTheShippedUnitsOnlyMissesTheInstalledBinaries() throws {
        let paths = UnitFile.names.map { Repository.file("systemd/\($0)") }
        let outcome = try Shell.run("/usr/bin/systemd-analyze", ["verify"] + paths)
        let complaints = outcome.output.split(separator: "\n")
        #expect(!complaints.isEmpty)
        for line in complaints {
            let installed = line.contains("/usr/bin/offertrack") || line.contains("/usr/lib/offertrack/")
            #expect(installed && line.contains("is not executable"), "\(line)")
        }
    }

    @Test(arguments: [
        "offertrackd.service", "offertrack-export.service", "offertrack-backup.service", "offertrack-payouts.service",
        "offertrack-seal.service",
    ])
    func securityExposureIsAtMostOne(unit: String) throws {
        let directory = ScratchDirectory()
        let paths = try Self.installedForTest(in: directory)
        let path = try #require(paths.first { $0.hasSuffix("/\(unit)") })
        // --threshold is on systemd's 0–100 scale: 10 is an exposure of 1.0.
        let outcome = try Shell.run(
            "/usr/bin/systemd-analyze", ["security", "--offline=true", "--threshold=10", "--no-pager", path])
        #expect(outcome.status == 0, "\(outcome.output)")
        let exposure = try #require(Self.overallExposure(outcome.output), "\(outcome.output)")
        #expect(exposure <= 1.0, "\(outcome.output)")
    }

    /// The number in "→ Overall exposure level for NAME: 0.4 SAFE".
    static func overallExposure(_ output: String) -> Double? {
        guard let line = output.split(separator: "\n").last(where: { $0.contains("Overall exposure level") }),
            let colon = line.lastIndex(of: ":")
        else { return nil }
        return line[line.index(after: colon)...].split(separator: " ").first.flatMap { Double($0) }
    }

    @Test func theDaemonServiceKeepsWhatTheDaemonNeeds() throws {
        let service = try UnitFile("offertrackd.service")
        #expect(service.value("Type") == "notify")
        #expect(service.value("NotifyAccess") == "main")
        #expect(service.value("ExecReload") == "/bin/kill -HUP $MAINPID")
        #expect(service.value("WatchdogSec").flatMap(UnitFile.seconds) ?? 0 > 0)
        // SO_PEERCRED needs real uids/gids: PrivateUsers= would map every peer to nobody.
        #expect(service.values("PrivateUsers").allSatisfy { $0 == "no" })
        #expect(service.value("DynamicUser") == nil)
        // Stopping waits for the drain (--drain-timeout, default 5 s) with a wide margin.
        let command = try #require(service.command("ExecStart"))
        let drain = command.firstIndex(of: "--drain-timeout").flatMap { Double(command[$0 + 1]) } ?? 5
        let stop = try #require(service.value("TimeoutStopSec").flatMap(UnitFile.seconds))
        #expect(stop >= drain * 2 + 10)
    }

    @Test func theSocketOutlivesTheServiceAndGatesWriters() throws {
        let socket = try UnitFile("offertrackd.socket")
        let service = try UnitFile("offertrackd.service")
        let listen = try #require(socket.value("ListenStream"))
        #expect(listen.hasPrefix("/"))
        // A RuntimeDirectory= is deleted when the service stops, which would take the socket with it.
        for runtime in service.values("RuntimeDirectory").flatMap({ $0.split(separator: " ") }) {
            #expect(!listen.hasPrefix("/run/\(runtime)/"))
        }
        #expect(socket.value("SocketMode") == "0660")
        #expect(socket.value("SocketUser") == service.value("User"))
        #expect(try #require(service.command("ExecStart")).contains(socket.value("SocketGroup") ?? "?"))
    }

    @Test func theExportSharesTheDaemonsUserAndStateDirectory() throws {
        let service = try UnitFile("offertrackd.service")
        let export = try UnitFile("offertrack-export.service")
        #expect(export.value("Type") == "oneshot")
        #expect(export.value("User") == service.value("User"))
        #expect(export.value("StateDirectory") == service.value("StateDirectory"))
        let timer = try UnitFile("offertrack-export.timer")
        #expect(timer.value("OnCalendar") == "*-*-* 00:15:00 UTC")
        #expect(timer.value("Persistent") == "true")
    }

    /// The payouts run as the export does, in the same sandbox and directory, after it, early in each month.
    @Test func thePayoutsRunMonthlyAfterTheExportInItsSandbox() throws {
        let export = try UnitFile("offertrack-export.service")
        let payouts = try UnitFile("offertrack-payouts.service")
        #expect(payouts.value("Type") == "oneshot")
        #expect(payouts.value("After")?.split(separator: " ").contains("offertrack-export.service") == true)
        let ignored: Set<String> = ["ExecCondition", "ExecStart", "Description", "After"]
        // Every other setting (user, directories, hardening) is the export's, line for line, but the payouts' due
        // day (docs/monitoring.md).
        let dueDay = "Environment=OFFERTRACK_PAYOUTS_DUE_DAY=5"
        let settings = { (unit: UnitFile) in
            unit.text.split(separator: "\n").filter { line in
                !line.hasPrefix("#") && line.contains("=") && !ignored.contains(String(line.prefix { $0 != "=" }))
                    && line != dueDay
            }
        }
        #expect(payouts.text.contains("\n\(dueDay)\n"))
        #expect(settings(payouts) == settings(export))
        let command = try #require(payouts.command("ExecStart"))
        #expect(command.first == "/usr/lib/offertrack/offertrack-payouts-catchup")
        let out = try #require(command.firstIndex(of: "--out").map { command[$0 + 1] })
        #expect(payouts.values("ReadWritePaths").contains(out))
        let timer = try UnitFile("offertrack-payouts.timer")
        #expect(timer.value("OnCalendar") == "*-*-01..07 01:30:00 UTC")
        #expect(timer.value("Persistent") == "true")
        #expect(timer.value("Unit") == "offertrack-payouts.service")
    }

    /// Money is never published from a rules file nobody gave (SPEC 6: without `--rules` an unpublished day or month
    /// is exit 64): the jobs that publish pass the daemon's own rules file.
    @Test(arguments: ["offertrack-export.service", "offertrack-payouts.service"])
    func thePublishingJobsPassTheDaemonsRulesFile(unit: String) throws {
        let rulesOf = { (command: [String]) in command.firstIndex(of: "--rules").map { command[$0 + 1] } }
        let daemon = try #require(try UnitFile("offertrackd.service").command("ExecStart"))
        let job = try #require(try UnitFile(unit).command("ExecStart"))
        #expect(rulesOf(daemon) == "/etc/offertrack/rules.json")
        #expect(rulesOf(job) == rulesOf(daemon), "\(unit): \(job)")
    }

    /// The nightly seal (SPEC 12) runs between the export and the backup, with the daemon's rules file (seal
    /// refuses to run without one) on the daemon's journal, as the daemon's user in the backup's sandbox.
    @Test func theNightlySealRunsWithTheDaemonsRulesBetweenTheExportAndTheBackup() throws {
        let service = try UnitFile("offertrack-seal.service")
        let daemon = try UnitFile("offertrackd.service")
        let seal = try #require(service.command("ExecStart"))
        #expect(Array(seal.prefix(2)) == ["/usr/bin/offertrack", "seal"])
        let rulesOf = { (command: [String]) in command.firstIndex(of: "--rules").map { command[$0 + 1] } }
        #expect(rulesOf(seal) == rulesOf(try #require(daemon.command("ExecStart"))))
        // The CLI's default journal is the daemon's ($STATE_DIRECTORY/offertrack.db).
        #expect(!seal.contains("--db"))
        #expect(service.value("Type") == "oneshot")
        #expect(service.value("User") == daemon.value("User"))
        #expect(service.value("StateDirectory") == daemon.value("StateDirectory"))
        #expect(service.values("ReadWritePaths").isEmpty)
        // Ordered after the export and before the backup, by the clock and when they start together (a
        // Persistent= catch-up at boot).
        let times = try ["export", "seal", "backup"].map { job in
            try #require(try UnitFile("offertrack-\(job).timer").value("OnCalendar"))
        }
        #expect(times == ["*-*-* 00:15:00 UTC", "*-*-* 00:30:00 UTC", "*-*-* 00:45:00 UTC"])
        #expect(try UnitFile("offertrack-seal.timer").value("Persistent") == "true")
        #expect(service.value("After")?.split(separator: " ").contains("offertrack-export.service") == true)
        let backup = try UnitFile("offertrack-backup.service")
        #expect(backup.value("After")?.split(separator: " ").contains("offertrack-seal.service") == true)
    }

    @Test func theBackupRunsNightlyAfterTheExportAsTheDaemonsUser() throws {
        let service = try UnitFile("offertrackd.service")
        let backup = try UnitFile("offertrack-backup.service")
        #expect(backup.value("Type") == "oneshot")
        #expect(backup.value("User") == service.value("User"))
        #expect(backup.value("StateDirectory") == service.value("StateDirectory"))
        let command = try #require(backup.command("ExecStart"))
        let out = try #require(command.firstIndex(of: "--out").map { command[$0 + 1] })
        #expect(backup.values("ReadWritePaths").contains(out))
        let timer = try UnitFile("offertrack-backup.timer")
        #expect(timer.value("OnCalendar") == "*-*-* 00:45:00 UTC")
        #expect(timer.value("Persistent") == "true")
        #expect(service.value("RestartPreventExitStatus")?.split(separator: " ").contains("65") == true)
    }

    /// The nightly script as the unit runs it: a verified backup, and only the newest --keep kept.
    @Test func theNightlyBackupScriptKeepsTheNewestVerifiedBackups() throws {
        let directory = ScratchDirectory()
        let daemon = try DaemonProcess(in: directory)
        guard daemon.waitReady() else { return }
        _ = try LineClient(path: daemon.socketPath).exchange(TestRecords.stream(prefix: "n", count: 20))
        let out = directory.file("backups")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        for old in ["offertrack-2026-01-01T004500Z.db", "offertrack-2026-01-02T004500Z.db"] {
            _ = FileManager.default.createFile(atPath: "\(out)/\(old)", contents: Data("old".utf8))
        }
        let outcome = try Shell.run(
            Repository.file("scripts/offertrack-backup-nightly"),
            ["--out", out, "--keep", "2", "--db", daemon.databasePath],
            environment: ["PATH": "/usr/bin:/bin", "OFFERTRACK": Binaries.cli])
        #expect(outcome.status == 0, "\(outcome.output)")
        let kept = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(kept.count == 2 && kept[0] == "offertrack-2026-01-02T004500Z.db", "\(kept)")
        let verify = try Shell.run(Binaries.cli, ["verify", "--db", "\(out)/\(kept[1])"])
        #expect(verify.status == 0, "\(verify.output)")
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
    }
}

extension SystemdUnitTests {
    /// The optional metrics drop-in: systemd reads it (an unknown key would show), it only adds
    /// `--metrics-listen` to the daemon's command, and the unit stays hardened with loopback as its only network.
    @Test func theMetricsDropInVerifiesAndOnlyOpensLoopback() throws {
        let directory = ScratchDirectory()
        let paths = try Self.installedForTest(in: directory)
        let service = try #require(paths.first { $0.hasSuffix("/offertrackd.service") })
        let dropIn = try UnitFile("offertrackd.service.d/metrics.conf")
        try FileManager.default.createDirectory(
            atPath: directory.file("offertrackd.service.d"), withIntermediateDirectories: true)
        try Self.pointedAtThisBuild(dropIn.text).write(
            toFile: directory.file("offertrackd.service.d/metrics.conf"), atomically: true, encoding: .utf8)
        let verify = try Shell.run("/usr/bin/systemd-analyze", ["verify", service])
        #expect(verify.status == 0 && verify.output.isEmpty, "\(verify.output)")
        let base = try #require(try UnitFile("offertrackd.service").command("ExecStart"))
        let withMetrics = try #require(dropIn.command("ExecStart"))
        #expect(withMetrics == base + ["--metrics-listen", "127.0.0.1:9464"])
        #expect(dropIn.value("IPAddressAllow") == "localhost" && dropIn.value("IPAddressDeny") == "any")
        let security = try Shell.run("/usr/bin/systemd-analyze", ["security", "--offline=true", "--no-pager", service])
        let exposure = try #require(Self.overallExposure(security.output), "\(security.output)")
        #expect(exposure <= 1.5, "\(security.output)")
    }
}

extension SystemdUnitTests {
    /// The edge and central drop-ins: systemd reads them cleanly, they only add the fleet flags to the daemon's
    /// command, and the only addresses the unit may reach are the stream servers named in that command.
    @Test(arguments: ["edge.conf", "central.conf"])
    func theFleetDropInsAllowExactlyTheStreamServers(dropInName: String) throws {
        let directory = ScratchDirectory()
        let paths = try Self.installedForTest(in: directory)
        let service = try #require(paths.first { $0.hasSuffix("/offertrackd.service") })
        let dropIn = try UnitFile("fleet/\(dropInName)")
        try FileManager.default.createDirectory(
            atPath: directory.file("offertrackd.service.d"), withIntermediateDirectories: true)
        try Self.pointedAtThisBuild(dropIn.text).write(
            toFile: directory.file("offertrackd.service.d/fleet.conf"), atomically: true, encoding: .utf8)
        let verify = try Shell.run("/usr/bin/systemd-analyze", ["verify", service])
        #expect(verify.status == 0 && verify.output.isEmpty, "\(verify.output)")
        let base = try #require(try UnitFile("offertrackd.service").command("ExecStart"))
        let fleet = try #require(dropIn.command("ExecStart"))
        #expect(Array(fleet.prefix(base.count)) == base)
        let flag = dropInName == "edge.conf" ? "--forward" : "--consume"
        let urls = try #require(fleet.firstIndex(of: flag).map { fleet[$0 + 1] })
        let hosts = urls.split(separator: ",").map { url in
            String(url.dropFirst("nats://".count).split(separator: ":")[0])
        }
        #expect(dropIn.value("IPAddressDeny") == "any")
        #expect(dropIn.value("IPAddressAllow")?.split(separator: " ").map(String.init) == hosts)
        // The daemon accepts exactly these flags (the writers' and reviewers' groups, absent here, as numbers).
        let groups = ["offertrack-writers": "4242", "offertrack-reviewers": "4243"]
        let flags = fleet.dropFirst().map { groups[$0] ?? $0 }
        let parsed = try Shell.run(Binaries.daemon, flags + ["--help"])
        #expect(parsed.status == 0, "\(parsed.output)")
    }
}

extension SystemdUnitTests {
    /// The nightly jobs, each run by its timer.
    static let jobs = ["export", "payouts", "seal", "backup"]

    /// Every nightly job's service asks the host's role first (`ExecCondition=`: exit 1 to 254 skips the job, and the
    /// unit is not failed), so a timer that fires on every host runs its job only where the role says.
    @Test(arguments: jobs)
    func everyNightlyJobAsksTheHostsRoleFirst(job: String) throws {
        let service = try UnitFile("offertrack-\(job).service")
        #expect(service.command("ExecCondition") == ["/usr/lib/offertrack/offertrack-role", job])
        #expect(try UnitFile("offertrack-\(job).timer").value("Unit") == "offertrack-\(job).service")
    }

    /// `offertrack-role JOB` with the role file holding `role` (nil: no file, a single host): exit 0 for each job the
    /// role runs, 1 (skipped) for the others; without a job it names them.
    @Test(
        arguments: [
            (nil, ["export", "payouts", "seal", "backup"]),
            ("", ["export", "payouts", "seal", "backup"]),
            ("edge\n", ["seal", "backup"]),
            ("central\n", ["seal", "backup"]),
            ("reporting\n", ["export", "payouts"]),
            (
                "# the central host, which publishes too\ncentral reporting # both\n",
                ["export", "payouts", "seal", "backup"]
            ),
        ] as [(String?, [String])])
    func theRoleFileDecidesWhichJobsRun(role: String?, runs: [String]) throws {
        let directory = ScratchDirectory()
        let file = directory.file("role")
        if let role { try role.write(toFile: file, atomically: true, encoding: .utf8) }
        for job in Self.jobs {
            let outcome = try Self.role([job], file: file)
            #expect(outcome.status == (runs.contains(job) ? 0 : 1), "\(role ?? "no file"): \(job): \(outcome.output)")
        }
        let summary = try Self.role([], file: file)
        #expect(
            summary.status == 0 && summary.output.hasSuffix(": \(runs.joined(separator: " "))\n"), "\(summary.output)")
    }

    /// A role file that makes no sense fails every job (255: systemd marks the job failed instead of skipping it).
    @Test(arguments: ["edge central\n", "reporting edge\n", "relay\n", "Central\n"])
    func aRoleFileThatMakesNoSenseFailsEveryJob(role: String) throws {
        let directory = ScratchDirectory()
        let file = directory.file("role")
        try role.write(toFile: file, atomically: true, encoding: .utf8)
        for job in Self.jobs {
            let outcome = try Self.role([job], file: file)
            #expect(outcome.status == 255 && outcome.output.contains(file), "\(role): \(job): \(outcome.output)")
        }
    }

    /// The check as a job's unit runs it: in its sandbox, as an unprivileged user, any system call outside its
    /// filter killing the process.
    @Test(arguments: jobs)
    func theRoleCheckRunsInsideEachJobsSandbox(job: String) throws {
        let directory = ScratchDirectory()
        let unit = directory.file("offertrack-\(job).service")
        try UnitFile("offertrack-\(job).service").text.write(toFile: unit, atomically: true, encoding: .utf8)
        let state = directory.file("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try "reporting\n".write(toFile: directory.file("role"), atomically: true, encoding: .utf8)
        let sandbox =
            ["-m", "-n", "-i", Repository.file("Tests/Tools/systemd-like-sandbox")]
            + [directory.path, state, "65534", "65534", "kill", unit, "--"]
        let outcome = try Shell.run(
            "/usr/bin/unshare", sandbox + [Repository.file("scripts/offertrack-role"), job],
            environment: ["PATH": "/usr/bin:/bin", "OFFERTRACK_ROLE_FILE": directory.file("role")])
        #expect(outcome.status == (["export", "payouts"].contains(job) ? 0 : 1), "\(job): \(outcome.output)")
    }

    /// `scripts/offertrack-role ARGUMENTS` with `OFFERTRACK_ROLE_FILE` set to `file`.
    static func role(_ arguments: [String], file: String) throws -> Shell.Outcome {
        try Shell.run(
            Repository.file("scripts/offertrack-role"), arguments,
            environment: ["PATH": "/usr/bin:/bin", "OFFERTRACK_ROLE_FILE": file])
    }
}
