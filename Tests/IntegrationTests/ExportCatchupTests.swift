import Foundation
import Posix
import TestSupport
import Testing

/// scripts/offertrack-export-catchup against a stand-in CLI with the `export`/`status` interface it relies
/// on (the real `export` command is written separately): the script must publish every missing day in order.
@Suite struct ExportCatchupTests {
    /// A fake `offertrack`: status reports the last line of $FAKE_STATE/published, export appends its day
    /// (refusing a gap like the real one) and writes the CSV; days listed in $FAKE_STATE/fail exit 75.
    static let fakeCLI = """
        #!/bin/sh
        state=$FAKE_STATE
        echo "$*" >> "$state/calls"
        command=$1
        shift
        last=$(tail -n 1 "$state/published" 2>/dev/null || true)
        case $command in
        status)
            [ -f "$state/status-exit" ] && exit "$(cat "$state/status-exit")"
            echo "daemon: down (/run/offertrack.sock)"
            echo "last published export: ${last:-none}"
            exit 69 ;;
        export)
            [ "$1" = --date ] && [ "$3" = --out ] || exit 64
            day=$2 out=$4
            grep -qx "$day" "$state/fail" 2>/dev/null && exit 75
            if [ -n "$last" ] && [ "$day" != "$(date -u -d "$last + 1 day" +%F)" ]; then
                echo "offertrack export: $(date -u -d "$last + 1 day" +%F) is not published" >&2
                exit 65
            fi
            echo "$day" >> "$state/published" && : > "$out/commissions-$day.csv" || exit 74 ;;
        *) exit 64 ;;
        esac
        """

    /// One scratch setup: the fake CLI, its state and an output directory.
    final class Setup {
        let directory = ScratchDirectory("ot-catchup")
        var cli: String { directory.file("offertrack") }
        var state: String { directory.file("state") }
        var out: String { directory.file("exports") }

        init(published: [String] = [], failing: [String] = []) throws {
            for path in [state, out] {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            }
            try ExportCatchupTests.fakeCLI.write(toFile: cli, atomically: true, encoding: .utf8)
            chmod(cli, 0o755)
            if !published.isEmpty {
                try lines(published).write(toFile: "\(state)/published", atomically: true, encoding: .utf8)
            }
            if !failing.isEmpty { try lines(failing).write(toFile: "\(state)/fail", atomically: true, encoding: .utf8) }
        }

        private func lines(_ items: [String]) -> String { items.map { $0 + "\n" }.joined() }

        var environment: [String: String] { ["PATH": "/usr/bin:/bin", "OFFERTRACK": cli, "FAKE_STATE": state] }

        func run(_ arguments: [String]) throws -> Shell.Outcome {
            try Shell.run(Repository.file("scripts/offertrack-export-catchup"), arguments, environment: environment)
        }

        func read(_ name: String) -> [String] {
            let text = (try? String(contentsOfFile: "\(state)/\(name)", encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map(String.init)
        }

        var published: [String] { read("published") }
        var exportCalls: [String] { read("calls").filter { $0.hasPrefix("export") } }
    }

    @Test func withNothingPublishedOnlyTheLastDayIsExported() throws {
        let setup = try Setup()
        let outcome = try setup.run(["--out", setup.out, "--until", "2026-11-28"])
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(setup.published == ["2026-11-28"])
        #expect(FileManager.default.fileExists(atPath: "\(setup.out)/commissions-2026-11-28.csv"))
    }

    @Test func everyMissingDayIsExportedInOrderAcrossMonthAndYear() throws {
        let setup = try Setup(published: ["2025-12-29"])
        let outcome = try setup.run([
            "--out", setup.out, "--until", "2026-01-02", "--rules", "/r.json", "--db", "/d.db",
        ])
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(setup.published == ["2025-12-29", "2025-12-30", "2025-12-31", "2026-01-01", "2026-01-02"])
        #expect(setup.exportCalls.first == "export --date 2025-12-30 --out \(setup.out) --db /d.db --rules /r.json")
        #expect(setup.read("calls").first == "status --db /d.db --rules /r.json")
    }

    @Test func anUpToDateJournalExportsNothing() throws {
        let setup = try Setup(published: ["2026-11-28"])
        let outcome = try setup.run(["--out", setup.out, "--until", "2026-11-28"])
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(setup.exportCalls.isEmpty)
    }

    @Test func aFailingDayStopsTheRunWithItsExitCodeAndTheNextRunResumes() throws {
        let setup = try Setup(published: ["2026-11-25"], failing: ["2026-11-27"])
        let outcome = try setup.run(["--out", setup.out, "--until", "2026-11-28"])
        #expect(outcome.status == 75, "\(outcome.output)")
        #expect(setup.published == ["2026-11-25", "2026-11-26"])
        #expect(outcome.output.contains("2026-11-27"))
        try FileManager.default.removeItem(atPath: "\(setup.state)/fail")
        #expect(try setup.run(["--out", setup.out, "--until", "2026-11-28"]).status == 0)
        #expect(setup.published == ["2026-11-25", "2026-11-26", "2026-11-27", "2026-11-28"])
    }

    @Test func theDefaultLastDayIsYesterdayInUTC() throws {
        let setup = try Setup()
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        // Yesterday before and after the run: across a UTC midnight either is right (not a false failure).
        let before = formatter.string(from: Date().addingTimeInterval(-86400))
        #expect(try setup.run(["--out", setup.out]).status == 0)
        let after = formatter.string(from: Date().addingTimeInterval(-86400))
        #expect(setup.published == [before] || setup.published == [after], "\(setup.published)")
    }

    @Test func aDayThatHasNotEndedIsNeverAskedFor() throws {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        let day = { (offset: Double) in formatter.string(from: Date().addingTimeInterval(offset * 86400)) }
        let setup = try Setup(published: [day(-3)])
        let outcome = try setup.run(["--out", setup.out, "--until", day(400)])
        #expect(outcome.status == 0 && outcome.output.contains("has not ended yet"), "\(outcome.output)")
        // Yesterday at the latest; a day after a midnight crossed during the run is refused by the clock check.
        #expect(setup.published.last.map { $0 == day(-1) || $0 == day(0) } == true, "\(setup.published)")
        #expect(!setup.exportCalls.contains { $0.contains(day(1)) || $0.contains(day(400)) })
    }

    @Test func aStatusFailureOrBadArgumentsExportNothing() throws {
        let setup = try Setup()
        try "66".write(toFile: "\(setup.state)/status-exit", atomically: true, encoding: .utf8)
        #expect(try setup.run(["--out", setup.out, "--until", "2026-11-28"]).status == 66)
        #expect(try setup.run(["--out", setup.out, "--until", "2026-02-30"]).status == 64)
        #expect(try setup.run(["--bogus", "x"]).status == 64)
        #expect(setup.exportCalls.isEmpty)
    }

    /// The script (dash, date, sed) and the real Swift CLI under offertrack-export.service's sandbox, with
    /// any system call outside its filter killing the process.
    @Test func theScriptAndTheCLIRunInsideTheExportSandbox() throws {
        let setup = try Setup(published: ["2026-11-26"])
        let unit = setup.directory.file("offertrack-export.service")
        try UnitFile("offertrack-export.service").text.write(toFile: unit, atomically: true, encoding: .utf8)
        for path in [setup.state, setup.out, "\(setup.state)/published"] { chown(path, 65534, 65534) }
        let sandbox =
            ["-m", "-n", "-i", Repository.file("Tests/Tools/systemd-like-sandbox")]
            + [setup.directory.path, "\(setup.state):\(setup.out)", "65534", "65534", "kill", unit, "--"]
        let script = try Shell.run(
            "/usr/bin/unshare",
            sandbox + [
                Repository.file("scripts/offertrack-export-catchup"), "--out", setup.out, "--until", "2026-11-28",
            ],
            environment: setup.environment)
        #expect(script.status == 0, "\(script.output)")
        #expect(setup.published == ["2026-11-26", "2026-11-27", "2026-11-28"])

        // The real CLI reads a journal in the state directory (made by the daemon, here outside the sandbox).
        let daemon = try DaemonProcess(in: setup.directory, databasePath: "\(setup.state)/offertrack.db")
        guard daemon.waitReady() else { return }
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
        chown("\(setup.state)/offertrack.db", 65534, 65534)
        let status = try Shell.run(
            "/usr/bin/unshare", sandbox + [Binaries.cli, "status", "--db", "\(setup.state)/offertrack.db"],
            environment: ["PATH": "/usr/bin:/bin", "OFFERTRACK_SOCKET": "/run/offertrack.sock"])
        #expect(status.status == 69, "\(status.output)")  // the daemon is down; the journal is still read
        #expect(status.output.contains("last published export: none"), "\(status.output)")
    }
}
