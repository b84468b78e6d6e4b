import Foundation
import Posix
import TestSupport
import Testing

/// scripts/offertrack-payouts-catchup against a stand-in CLI with the `status`/`payouts` interface it relies on:
/// every month whose last day is exported is published in order, and no other month is ever asked for.
@Suite struct PayoutsCatchupTests {
    /// A fake `offertrack`: status reports the first and last lines of $FAKE_STATE/days and the last of
    /// $FAKE_STATE/months; payouts refuses (65) a month whose last day is not in days or that leaves a gap, like
    /// the real one, else appends it and writes its CSV; months listed in $FAKE_STATE/fail exit 75.
    static let fakeCLI = """
        #!/bin/sh
        state=$FAKE_STATE
        echo "$*" >> "$state/calls"
        command=$1
        shift
        first=$(head -n 1 "$state/days" 2>/dev/null || true)
        last=$(tail -n 1 "$state/days" 2>/dev/null || true)
        month=$(tail -n 1 "$state/months" 2>/dev/null || true)
        case $command in
        status)
            echo "daemon: down (/run/offertrack.sock)"
            echo "last published export: ${last:-none}"
            echo "first published export: ${first:-none}"
            echo "last published payouts: ${month:-none}"
            exit 69 ;;
        payouts)
            [ "$1" = --month ] && [ "$3" = --out ] || exit 64
            wanted=$2 out=$4
            grep -qx "$wanted" "$state/fail" 2>/dev/null && exit 75
            end=$(date -u -d "$wanted-01 + 1 month - 1 day" +%F)
            grep -qx "$end" "$state/days" 2>/dev/null || { echo "payouts: export $end first" >&2; exit 65; }
            if [ -n "$month" ] && [ "$wanted" != "$(date -u -d "$month-01 + 1 month" +%Y-%m)" ]; then exit 65; fi
            echo "$wanted" >> "$state/months" && : > "$out/payouts-$wanted.csv" || exit 74 ;;
        *) exit 64 ;;
        esac
        """

    /// One scratch setup: the fake CLI, its state (published days from `first` through `last`, published months)
    /// and an output directory.
    final class Setup {
        let directory = ScratchDirectory("ot-payouts-catchup")
        var cli: String { directory.file("offertrack") }
        var state: String { directory.file("state") }
        var out: String { directory.file("out") }

        init(days: (first: String, last: String)? = nil, months: [String] = [], failing: [String] = []) throws {
            for path in [state, out] {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            }
            try PayoutsCatchupTests.fakeCLI.write(toFile: cli, atomically: true, encoding: .utf8)
            chmod(cli, 0o755)
            let published = days.map { PublishedDaysFixture.days(from: $0.first, through: $0.last) } ?? []
            for (name, lines) in [("days", published), ("months", months), ("fail", failing)] where !lines.isEmpty {
                try lines.map { $0 + "\n" }.joined().write(
                    toFile: "\(state)/\(name)", atomically: true, encoding: .utf8)
            }
        }

        var environment: [String: String] { ["PATH": "/usr/bin:/bin", "OFFERTRACK": cli, "FAKE_STATE": state] }

        func run(_ arguments: [String] = []) throws -> Shell.Outcome {
            try Shell.run(
                Repository.file("scripts/offertrack-payouts-catchup"), ["--out", out] + arguments,
                environment: environment)
        }

        func read(_ name: String) -> [String] {
            let text = (try? String(contentsOfFile: "\(state)/\(name)", encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map(String.init)
        }

        var months: [String] { read("months") }
        var payoutCalls: [String] { read("calls").filter { $0.hasPrefix("payouts") } }
    }

    @Test func withNoExportPublishedNothingIsAskedFor() throws {
        let setup = try Setup()
        let outcome = try setup.run()
        #expect(outcome.status == 0 && outcome.output.contains("nothing to do"), "\(outcome.output)")
        #expect(setup.payoutCalls.isEmpty)
    }

    @Test func everyMonthWhoseLastDayIsExportedIsPublishedFromTheFirstExportDaysMonth() throws {
        let setup = try Setup(days: ("2026-10-30", "2027-02-27"))
        let outcome = try setup.run(["--rules", "/r.json", "--db", "/d.db"])
        #expect(outcome.status == 0, "\(outcome.output)")
        // February's last day (the 28th) is not exported: it is never asked for.
        #expect(setup.months == ["2026-10", "2026-11", "2026-12", "2027-01"])
        #expect(setup.payoutCalls.count == 4)
        #expect(setup.payoutCalls.first == "payouts --month 2026-10 --out \(setup.out) --db /d.db --rules /r.json")
        #expect(setup.read("calls").first == "status --db /d.db --rules /r.json")
        #expect(outcome.output.contains("2027-02 waits for its last day, 2027-02-28"), "\(outcome.output)")
    }

    @Test func aMonthIsPublishedTheRunAfterItsLastDayIsExportedAndOnlyOnce() throws {
        let setup = try Setup(days: ("2028-01-15", "2028-02-28"), months: ["2028-01"])
        #expect(try setup.run().status == 0)
        #expect(setup.payoutCalls.isEmpty)  // 2028 is a leap year: February ends on the 29th
        let days = setup.read("days") + ["2028-02-29"]
        try days.map { $0 + "\n" }.joined().write(toFile: "\(setup.state)/days", atomically: true, encoding: .utf8)
        #expect(try setup.run().status == 0)
        #expect(try setup.run().status == 0)
        #expect(setup.months == ["2028-01", "2028-02"])
        #expect(setup.payoutCalls == ["payouts --month 2028-02 --out \(setup.out)"])
    }

    @Test func aFailingMonthStopsTheRunWithItsExitCodeAndTheNextRunResumes() throws {
        let setup = try Setup(days: ("2026-09-01", "2026-12-31"), months: ["2026-09"], failing: ["2026-11"])
        let outcome = try setup.run()
        #expect(outcome.status == 75 && outcome.output.contains("2026-11"), "\(outcome.output)")
        #expect(setup.months == ["2026-09", "2026-10"])
        try FileManager.default.removeItem(atPath: "\(setup.state)/fail")
        #expect(try setup.run().status == 0)
        #expect(setup.months == ["2026-09", "2026-10", "2026-11", "2026-12"])
    }

    /// The textfile says when the oldest unpublished month is due: 00:00 UTC of OFFERTRACK_PAYOUTS_DUE_DAY (default
    /// the 5th) of the month after it, labelled with the month; a due day that is no day of every month is refused.
    @Test func theTextfileSaysWhenTheOldestUnpublishedMonthIsDue() throws {
        let setup = try Setup(days: ("2026-10-30", "2027-02-27"))
        let textfiles = setup.directory.file("textfiles")
        try FileManager.default.createDirectory(atPath: textfiles, withIntermediateDirectories: true)
        var environment = setup.environment
        environment["OFFERTRACK_TEXTFILE_DIR"] = textfiles
        let script = Repository.file("scripts/offertrack-payouts-catchup")
        let outcome = try Shell.run(script, ["--out", setup.out], environment: environment)
        #expect(outcome.status == 0, "\(outcome.output)")
        let text = try String(contentsOfFile: "\(textfiles)/offertrack-payouts.prom", encoding: .utf8)
        // 2027-02 is the oldest unpublished month: due 2027-03-05T00:00:00Z.
        #expect(
            text.contains("\noffertrack_payouts_next_due_timestamp_seconds{month=\"2027-02\"} 1804204800\n"), "\(text)")
        environment["OFFERTRACK_PAYOUTS_DUE_DAY"] = "1"
        #expect(try Shell.run(script, ["--out", setup.out], environment: environment).status == 0)
        let first = try String(contentsOfFile: "\(textfiles)/offertrack-payouts.prom", encoding: .utf8)
        #expect(first.contains("{month=\"2027-02\"} 1803859200\n"), "\(first)")
        for bad in ["0", "29", "x"] {
            environment["OFFERTRACK_PAYOUTS_DUE_DAY"] = bad
            #expect(try Shell.run(script, ["--out", setup.out], environment: environment).status == 78, "\(bad)")
        }
    }

    @Test func badArgumentsAskForNothing() throws {
        let setup = try Setup(days: ("2026-09-01", "2026-12-31"))
        #expect(try setup.run(["--bogus", "x"]).status == 64)
        #expect(try setup.run(["--db"]).status == 64)
        #expect(setup.payoutCalls.isEmpty)
    }

    /// The script (dash, date, sed) under offertrack-payouts.service's sandbox, with any system call outside its
    /// filter killing the process.
    @Test func theScriptRunsInsideThePayoutsSandbox() throws {
        let setup = try Setup(days: ("2026-10-20", "2026-11-30"))
        let unit = setup.directory.file("offertrack-payouts.service")
        try UnitFile("offertrack-payouts.service").text.write(toFile: unit, atomically: true, encoding: .utf8)
        for path in [setup.state, setup.out, "\(setup.state)/days"] { chown(path, 65534, 65534) }
        let sandbox =
            ["-m", "-n", "-i", Repository.file("Tests/Tools/systemd-like-sandbox")]
            + [setup.directory.path, "\(setup.state):\(setup.out)", "65534", "65534", "kill", unit, "--"]
        let script = try Shell.run(
            "/usr/bin/unshare",
            sandbox + [Repository.file("scripts/offertrack-payouts-catchup"), "--out", setup.out],
            environment: setup.environment)
        #expect(script.status == 0, "\(script.output)")
        #expect(setup.months == ["2026-10", "2026-11"])
    }
}
