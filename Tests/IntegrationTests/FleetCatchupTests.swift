import Foundation
import OfferTrackDomain
import Posix
import SQLite
import Simulator
import TestSupport
import Testing

/// The nightly catch-up scripts on a fleet's reporting host (SPEC 10): given every central journal (`--db` more than
/// once, or a `--journals` file), they read each journal's published days and months and publish in all of them,
/// resuming from the journal furthest behind (where a run stopped midway left it). Real daemons, journals and CLI.
@Suite(.serialized) struct FleetCatchupTests {
    /// Two central daemons with `lines` journaled through an edge, the fleet's rules file and a scratch directory.
    final class Fleet {
        let directory = ScratchDirectory("ot-fleet-catchup")
        let server: NATSServer
        let centrals: [DaemonProcess]
        let edge: DaemonProcess
        var rules: String { directory.file("rules.json") }
        var out: String { directory.file("out") }
        var journals: [String] { centrals.map(\.databasePath) }

        init?(lines: [String]) throws {
            server = try NATSServer(in: directory)
            try TestFleet.rules.write(toFile: directory.file("rules.json"), atomically: true, encoding: .utf8)
            try FileManager.default.createDirectory(atPath: directory.file("out"), withIntermediateDirectories: true)
            let extra = ["--rules", directory.file("rules.json")]
            guard let (centrals, edge) = try TestFleet.twoCentralsAndAnEdge(server, extra: extra) else {
                return nil
            }
            self.centrals = centrals
            self.edge = edge
            #expect(try LineClient(path: edge.socketPath).exchange(lines).allSatisfy { $0.status == "accepted" })
            #expect(try eventually { try TestFleet.centralLines(centrals).count >= lines.count })
        }

        deinit { DaemonProcess.terminateCleanly(centrals + [edge]) }

        /// Runs `scripts/offertrack-NAME-catchup` with `--out` and `--rules` and `arguments`, on this build's CLI.
        func catchup(_ name: String, _ arguments: [String]) throws -> Shell.Outcome {
            try Shell.run(
                Repository.file("scripts/offertrack-\(name)-catchup"),
                ["--out", out, "--rules", rules] + arguments,
                environment: ["PATH": "/usr/bin:/bin", "OFFERTRACK": Binaries.cli])
        }

        /// `offertrack export` of `day` from the first central journal alone: what a fleet export stopped after
        /// that journal published leaves.
        func exportFromTheFirstJournalAlone(_ day: String) throws {
            let export = try Shell.run(
                Binaries.cli, ["export", "--date", day, "--out", out, "--rules", rules, "--db", journals[0]])
            #expect(export.status == 0, "\(export.output)")
        }

        /// A journals file as an operator writes it: every central journal, with a comment and stray blanks.
        func journalsFile() throws -> String {
            let path = directory.file("journals")
            let text = "# the central journals\n" + journals.map { "  \($0) \n" }.joined() + "\n"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        /// The days (or months) each central journal has published, from its `published_days` (`published_months`).
        func published(_ table: String, _ column: String) throws -> [[String]] {
            try journals.map { path in
                let connection = try Connection(path: path, mode: .readOnly)
                let statement = try connection.prepare("SELECT \(column) FROM \(table) ORDER BY \(column)")
                defer { statement.reset() }
                var values: [String] = []
                while try statement.step() { values.append(statement.text(0) ?? "") }
                return values
            }
        }
    }

    /// UTC midnight `days` days before today's, and its `YYYY-MM-DD`.
    static func day(_ days: Int64) -> (start: Int64, text: String) {
        let today = Clock.wallMilliseconds() / Timestamp.millisecondsPerDay * Timestamp.millisecondsPerDay
        let start = today - days * Timestamp.millisecondsPerDay
        return (start, Timestamp.formatDay(start))
    }

    static func lines(start: Int64, days: Int) -> [String] {
        Array(
            WorkloadSimulator(users: 200, seed: 23, start: start, days: days)
                .filter { !$0.isDuplicate && $0.record.type != .erasure }.map(\.line))
    }

    /// The first run publishes its last day in both journals; a journal left a day behind (a fleet export stopped
    /// after the other published it) is where the next run starts, completing that day, then the next.
    @Test func theExportCatchupPublishesEveryDayInEveryCentralJournal() throws {
        let (start, first) = Self.day(40)
        let (second, third) = (Self.day(39).text, Self.day(38).text)
        guard let fleet = try Fleet(lines: Self.lines(start: start, days: 3)) else { return }
        let several = fleet.journals.flatMap { ["--db", $0] }

        let initial = try fleet.catchup("export", ["--until", first] + several)
        #expect(initial.status == 0, "\(initial.output)")
        #expect(try fleet.published("published_days", "day") == [[first], [first]])

        try fleet.exportFromTheFirstJournalAlone(second)
        let resumed = try fleet.catchup("export", ["--until", third, "--journals", try fleet.journalsFile()])
        #expect(resumed.status == 0 && resumed.output.contains("exporting \(second)"), "\(resumed.output)")
        #expect(try fleet.published("published_days", "day") == [[first, second, third], [first, second, third]])
        for day in [first, second, third] {
            #expect(FileManager.default.fileExists(atPath: "\(fleet.out)/commissions-\(day).csv"), "\(day)")
        }
    }

    /// A month is published, in every central journal, only once its last day is published in all of them.
    @Test func thePayoutsCatchupWaitsForTheMonthsLastDayInEveryCentralJournal() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        let past = Date(timeIntervalSince1970: Double(Self.day(40).start) / 1000)
        let month = calendar.dateInterval(of: .month, for: past)
        let end = Int64(try #require(month).end.timeIntervalSince1970 * 1000) - Timestamp.millisecondsPerDay
        let (lastDay, dayBefore) = (Timestamp.formatDay(end), Timestamp.formatDay(end - Timestamp.millisecondsPerDay))
        let monthText = String(lastDay.prefix(7))
        guard let fleet = try Fleet(lines: Self.lines(start: end - Timestamp.millisecondsPerDay, days: 2)) else {
            return
        }
        let several = fleet.journals.flatMap { ["--db", $0] }
        #expect(try fleet.catchup("export", ["--until", dayBefore] + several).status == 0)
        try fleet.exportFromTheFirstJournalAlone(lastDay)

        let waiting = try fleet.catchup("payouts", several)
        #expect(
            waiting.status == 0 && waiting.output.contains("\(monthText) waits for its last day, \(lastDay)"),
            "\(waiting.output)")
        #expect(try fleet.published("published_months", "month") == [[], []])

        #expect(try fleet.catchup("export", ["--until", lastDay] + several).status == 0)
        let published = try fleet.catchup("payouts", ["--journals", try fleet.journalsFile()])
        #expect(published.status == 0, "\(published.output)")
        #expect(try fleet.published("published_months", "month") == [[monthText], [monthText]])
        #expect(FileManager.default.fileExists(atPath: "\(fleet.out)/payouts-\(monthText).csv"))
    }
}
