import Foundation
import JSON
import JournalStore
import OfferTrackDomain
import TestSupport
import Testing
import WireFormat

/// What an operator meets first: the README's two commands and the installer behind them, `--version`,
/// `--help` with an example on every command, and `status --format json`.
@Suite struct OperatorSurfaceTests {
    /// A dpkg database in which only `installed` are installed.
    static func dpkgStatus(installed: [String], in directory: ScratchDirectory) throws -> String {
        let admin = directory.file("dpkg-\(installed.count)")
        try FileManager.default.createDirectory(atPath: admin, withIntermediateDirectories: true)
        let entries = installed.map {
            "Package: \($0)\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1\n"
        }
        try (entries.joined(separator: "\n") + "\n").write(toFile: "\(admin)/status", atomically: true, encoding: .utf8)
        return "\(admin)/status"
    }

    static func installDeps(_ profile: String, status: String, dryRun: Bool, asNobody: Bool = false) throws
        -> Shell.Outcome
    {
        var environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "OFFERTRACK_DPKG_STATUS": status]
        if dryRun { environment["OFFERTRACK_INSTALL_DRY_RUN"] = "1" }
        let script = Repository.file("scripts/install-deps")
        if asNobody {
            return try Shell.run(
                "/usr/bin/setpriv", ["--reuid", "nobody", "--regid", "nogroup", "--clear-groups", script, profile],
                environment: environment)
        }
        return try Shell.run(script, [profile], environment: environment)
    }

    @Test func theInstallerInstallsExactlyWhatIsMissing() throws {
        let directory = ScratchDirectory()
        let none = try Self.dpkgStatus(installed: [], in: directory)
        let run = try Self.installDeps("run", status: none, dryRun: true)
        #expect(run.status == 0)
        #expect(
            run.output.contains(
                "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "
                    + "libsqlite3-dev libsystemd-dev libnats-dev pkg-config"), "\(run.output)")
        let test = try Self.installDeps("test", status: none, dryRun: true)
        for package in [
            "strace", "fuse3", "prometheus", "chromium", "postgresql-15", "nats-server", "dpkg-dev", "lintian",
        ] {
            #expect(test.output.contains(" \(package)"), "the test profile lacks \(package): \(test.output)")
        }
        // Only what is missing, and nothing at all when nothing is.
        let some = try Self.dpkgStatus(installed: ["libsqlite3-dev", "libnats-dev", "pkg-config"], in: directory)
        let partial = try Self.installDeps("run", status: some, dryRun: true)
        #expect(partial.output.hasSuffix("--no-install-recommends libsystemd-dev\n"), "\(partial.output)")
        let all = try Self.dpkgStatus(
            installed: ["libsqlite3-dev", "libsystemd-dev", "libnats-dev", "pkg-config"], in: directory)
        let nothing = try Self.installDeps("run", status: all, dryRun: false, asNobody: true)
        #expect(nothing.status == 0 && nothing.output.isEmpty, "\(nothing.output)")
        // Not root: the exact command to run, and exit 77.
        let refused = try Self.installDeps("run", status: some, dryRun: false, asNobody: true)
        #expect(refused.status == 77, "\(refused.output)")
        #expect(refused.output.contains("run as root: apt-get update && "), "\(refused.output)")
        #expect(try Self.installDeps("everything", status: none, dryRun: true).status == 64)
    }

    @Test func theReadmesTwoCommandsAreWhatCIAndTheScriptsRun() throws {
        let readme = try String(contentsOfFile: Repository.file("README.md"), encoding: .utf8)
        let quickStart = readme.components(separatedBy: "## Quick start")[1].components(separatedBy: "\n## ")[0]
        #expect(quickStart.contains("scripts/run                             # runs the daemon"))
        #expect(quickStart.contains("scripts/test                            # builds and runs the whole test suite"))
        let ci = try String(contentsOfFile: Repository.file(".ci/run"), encoding: .utf8)
        let ciCommands = ci.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
        #expect(ciCommands.suffix(2) == ["scripts/install-deps test", "scripts/test"], "\(ciCommands)")
        let test = try String(contentsOfFile: Repository.file("scripts/test"), encoding: .utf8)
        #expect(test.contains("\nscripts/install-deps test\n"))
        let run = try String(contentsOfFile: Repository.file("scripts/run"), encoding: .utf8)
        #expect(run.contains("scripts/install-deps\" run\n") && run.contains("offertrackd\" \"$@\""))
    }

    @Test func versionsNameTheJournalSchema() throws {
        for (binary, name) in [(Binaries.cli, "offertrack"), (Binaries.daemon, "offertrackd")] {
            let outcome = try Shell.run(binary, ["--version"])
            #expect(outcome.status == 0)
            #expect(
                outcome.output == "\(name) \(OfferTrackVersion.string) (journal schema \(Schema.currentVersion))\n",
                "\(outcome.output)")
        }
    }

    @Test(arguments: [
        "report", "explain", "export", "payouts", "ingest", "status", "rebuild", "verify", "simulate", "forward",
        "rules",
    ])
    func everyCommandsHelpHasAnExample(command: String) throws {
        let outcome = try Shell.run(Binaries.cli, [command, "--help"])
        #expect(outcome.status == 0)
        #expect(outcome.output.contains("Usage: offertrack \(command)"))
        let examples = outcome.output.components(separatedBy: "Example:\n  ").dropFirst().first ?? ""
        #expect(examples.contains("offertrack \(command)"), "\(outcome.output)")
    }

    @Test func statusInJSONForScripts() throws {
        let directory = ScratchDirectory()
        let daemon = try DaemonProcess(in: directory)
        guard daemon.waitReady() else { return }
        #expect(
            try LineClient(path: daemon.socketPath).exchange([TestRecords.capabilities(id: "s-1")]).map(\.status)
                == ["accepted"])
        let outcome = try Shell.run(
            Binaries.cli, ["status", "--db", daemon.databasePath, "--socket", daemon.socketPath, "--format", "json"])
        #expect(outcome.status == 0)
        guard case .object(let status) = try JSONParser.parse(Array(outcome.output.utf8)) else {
            Issue.record("not a JSON object: \(outcome.output)")
            return
        }
        #expect(status["daemon"] == .string("up"))
        #expect(status["lastSeq"] == .number(JSONNumber(literal: "1")))
        #expect(status["lastPublishedExport"] == .null)
        #expect(status["firstPublishedExport"] == .null && status["lastPublishedPayouts"] == .null)
        #expect(status["schemaVersion"] == .number(JSONNumber(literal: "\(Schema.currentVersion)")))
        guard case .object(let records)? = status["records"] else {
            Issue.record("no records object")
            return
        }
        #expect(records["capabilities"] == .number(JSONNumber(literal: "1")))
        #expect(Set(status.members.map(\.key)).count == 16, "\(status.members.map(\.key))")
        #expect(status["lastSealedDay"] == .null && status["acceptanceHorizon"] == .null)
        #expect(status["forward"] == .null && status["consume"] == .null && status["stream"] == .null)
        daemon.signal(2)
        #expect(daemon.waitExit() == 0)
    }
}
