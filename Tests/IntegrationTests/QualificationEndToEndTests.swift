import Foundation
import OfferTrackDomain
import Posix
import SQLite
import TestSupport
import Testing

/// Rule 4.6 through the real daemon and CLI: exports on the qualifying day, late lapses reversed, days that have
/// not ended refused, `explain` by user and by id, and a holding period changed on SIGHUP.
@Suite struct QualificationEndToEndTests {
    /// A one-hour holding period; rules[0] pays 500.
    static let rules = #"{"currency":"USD","holdingPeriodHours":1,"rules":[{"affiliateToken":"*","amountMinor":500}]}"#

    static func record(_ type: String, _ id: String, _ ts: String, _ fields: String) -> String {
        #"{"type":"\#(type)","id":"\#(id)","ts":"\#(ts)","user":"u-late",\#(fields)}"#
    }

    /// Checked, shown and converted late on 2026-11-10: with H = 1 h it qualifies on 2026-11-11 at 00:30.
    static let converting = [
        record("capabilities", "c1", "2026-11-10T23:00:00Z", #""authorization":"authorized","capabilities":2"#),
        record(
            "offer.presented", "p1", "2026-11-10T23:10:00Z", #""offer":{"action":"subscribe","affiliateToken":"aff1"}"#),
        record("subscription.outcome", "o1", "2026-11-10T23:30:00Z", #""outcome":"subscribed","offerId":"p1""#),
    ]
    /// Playback gone 15 minutes after the conversion: the trial ended unpaid.
    static let lapse = record(
        "capabilities", "l1", "2026-11-10T23:45:00Z",
        #""authorization":3,"subscription":{"canPlayCatalogContent":false,"canBecomeSubscriber":true,"hasCloudLibraryEnabled":false}"#
    )

    static func run(_ arguments: [String]) throws -> Shell.Outcome {
        try Shell.run(Binaries.cli, arguments, environment: ["PATH": "/usr/bin:/bin"])
    }

    static func dataRows(_ path: String) throws -> [String] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return text.split(separator: "\n").dropFirst().map(String.init)
    }

    @Test func aLateConversionIsExportedOnItsQualifyingDayAndALateLapseReversesIt() throws {
        let directory = ScratchDirectory()
        let rules = directory.file("rules.json")
        try Self.rules.write(toFile: rules, atomically: true, encoding: .utf8)
        let out = directory.file("out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules])
        guard daemon.waitReady() else { return }
        let client = try LineClient(path: daemon.socketPath)
        #expect(client.exchange(Self.converting).map(\.status) == ["accepted", "accepted", "accepted"])
        let db = daemon.databasePath
        func export(_ day: String) throws -> [String] {
            let outcome = try Self.run(["export", "--db", db, "--rules", rules, "--date", day, "--out", out])
            #expect(outcome.status == 0, "\(outcome.output)")
            return try Self.dataRows("\(out)/commissions-\(day).csv")
        }
        // The conversion's own day carries nothing: it qualifies the next day.
        #expect(try export("2026-11-10") == [])
        #expect(
            try export("2026-11-11") == [
                "commission,o1,2026-11-10T23:30:00.000Z,p1,2026-11-10T23:10:00.000Z,aff1,,join,,500,USD,"
            ])
        // The lapse arrives after that day was published: the next day exported reverses the row.
        #expect(client.exchange([Self.lapse]).map(\.status) == ["accepted"])
        #expect(
            try export("2026-11-12") == [
                "adjustment,o1,2026-11-10T23:30:00.000Z,p1,2026-11-10T23:10:00.000Z,aff1,,join,,-500,USD,2026-11-11"
            ])
        // Published days are immutable, and every file so far sums to what the published days earn now: 0.
        #expect(try export("2026-11-11").count == 1)
        let explained = try Self.run(["explain", "--db", db, "--rules", rules, "--user", "u-late", "--format", "json"])
        #expect(
            explained.output.contains(#""lapse":{"id":"l1","ts":"2026-11-10T23:45:00.000Z"}"#), "\(explained.output)")
        #expect(explained.output.contains(#""state":"lapsed""#))
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
    }

    @Test func aDayThatHasNotEndedIsRefusedAndNothingIsWritten() throws {
        let directory = ScratchDirectory()
        let out = directory.file("out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let rules = directory.file("rules.json")
        try #"{"currency":"USD","rules":[]}"#.write(toFile: rules, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(in: directory)
        guard daemon.waitReady() else { return }
        let now = Clock.wallMilliseconds()
        for day in [now, now + Timestamp.millisecondsPerDay].map(Timestamp.formatDay) {
            let outcome = try Self.run(
                ["export", "--db", daemon.databasePath, "--rules", rules, "--date", day, "--out", out])
            #expect(outcome.status == 65 && outcome.output.contains("has not ended"), "\(outcome.output)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == [])
        #expect(try Self.run(["status", "--db", daemon.databasePath]).output.contains("last published export: none"))
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
    }

    @Test func explainByIdOfAnyRecordEqualsByUserAndUnknownOnesExit66() throws {
        let directory = ScratchDirectory()
        let rules = directory.file("rules.json")
        try Self.rules.write(toFile: rules, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules])
        guard daemon.waitReady() else { return }
        _ = try LineClient(path: daemon.socketPath).exchange(Self.converting)
        let db = daemon.databasePath
        let base = ["explain", "--db", db, "--rules", rules, "--as-of", "2026-11-11T00:29:59.999Z"]
        let byUser = try Self.run(base + ["--user", "u-late", "--format", "json"])
        #expect(byUser.status == 0 && byUser.output.contains(#""state":"pending""#), "\(byUser.output)")
        for id in ["c1", "p1", "o1"] {
            #expect(try Self.run(base + ["--id", id, "--format", "json"]).output == byUser.output)
        }
        let text = try Self.run(base + ["--id", "p1"])
        #expect(text.status == 0 && text.output.contains("4.6 holding:") && text.output.contains("o1 at"))
        for missing in [["--user", "nobody"], ["--id", "no-such-record"]] {
            let outcome = try Self.run(base + missing)
            #expect(outcome.status == 66 && outcome.output.contains("has no"), "\(outcome.output)")
        }
        #expect(try Self.run(base).status == 64)
        #expect(try Self.run(base + ["--user", "u-late", "--id", "o1"]).status == 64)
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
    }

    @Test func aHoldingPeriodChangedOnSighupIsKeptCurrentByTheJoin() throws {
        let directory = ScratchDirectory()
        let rules = directory.file("rules.json")
        try #"{"currency":"USD","rules":[{"affiliateToken":"*","amountMinor":500}]}"#.write(
            toFile: rules, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules])
        guard daemon.waitReady() else { return }
        let client = try LineClient(path: daemon.socketPath)
        _ = client.exchange(Self.converting + [Self.lapse])
        let db = daemon.databasePath
        let report = ["report", "--db", db, "--rules", rules, "--format", "json", "--as-of", "2027-01-01"]
        // H = 0: nothing lapses.
        #expect(
            try Self.run(report).output.contains(#""lapsed":0,"voided":0,"held":0,"pending":0,"commissionMinor":500"#))
        try Self.rules.write(toFile: rules, atomically: true, encoding: .utf8)
        daemon.notify.reset()
        daemon.signal(Signals.hangup)
        #expect(daemon.notify.waitFor(line: "READY=1") != nil)
        // The derived tables now follow H = 1 h, and records that arrive later are joined under it.
        let connection = try Connection(path: db, mode: .readOnly)
        #expect(try connection.scalarText("SELECT value FROM meta WHERE key = 'derived_holding_ms'") == "3600000")
        #expect(
            try Self.run(report).output.contains(#""lapsed":1,"voided":0,"held":0,"pending":0,"commissionMinor":0"#))
        let other = Self.converting.map { $0.replacingOccurrences(of: "u-late", with: "u-two") }
            .map { $0.replacingOccurrences(of: #""id":""#, with: #""id":"two-"#) }
            .map { $0.replacingOccurrences(of: #""offerId":"p1""#, with: #""offerId":"two-p1""#) }
        #expect(client.exchange(other).map(\.status) == ["accepted", "accepted", "accepted"])
        let verify = try Self.run(["verify", "--db", db, "--rules", rules])
        #expect(verify.status == 0 && !verify.output.contains("FAILED"), "\(verify.output)")
        #expect(
            try Self.run(report).output.contains(#""lapsed":1,"voided":0,"held":0,"pending":0,"commissionMinor":500"#))
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
    }
}
