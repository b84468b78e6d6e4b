import Foundation
import JSON
import OfferTrackDomain
import SQLite
import TestSupport
import Testing

/// `offertrack seal` through the real binaries (SPEC 12): no output changes, the horizon and `expired`, `status`,
/// the windows fixed once sealed, refusals, and a seal killed at any step.
@Suite(.serialized) struct SealingTests {
    /// R = 40 days, default windows (K = 31), H = 72 h.
    static let rules =
        #"{"currency":"USD","holdingPeriodHours":72,"retentionDays":40,"rules":[{"affiliateToken":"*","amountMinor":500}]}"#
    static let asOf = "2026-12-01"
    /// 00:00Z of 2026-08-06, the first day the seal at 2026-09-15 leaves unsealed.
    static let sealedBefore: Int64 = 1_785_974_400_000

    static func cli(_ arguments: [String], environment: [String: String] = [:]) throws -> Shell.Outcome {
        try Shell.run(Binaries.cli, arguments, environment: ["PATH": "/usr/bin:/bin"].merging(environment) { $1 })
    }

    /// A daemon with 90 days of returning users' records from 2026-06-01, and the rules file.
    static func journal(_ directory: ScratchDirectory, users: Int) throws -> (
        DaemonProcess, rules: String, users: [String]
    )? {
        let rules = directory.file("rules.json")
        try Self.rules.write(toFile: rules, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules])
        guard daemon.waitReady() else { return nil }
        let simulated = try cli([
            "simulate", "--users", "\(users)", "--returning", "--days", "90", "--start", "2026-06-01T00:00:00Z",
        ])
        let input = directory.file("in.ndjson")
        try simulated.output.write(toFile: input, atomically: true, encoding: .utf8)
        let ingest = try cli(["ingest", input, "--socket", daemon.socketPath])
        #expect(ingest.status == 0, "\(ingest.output)")
        var names = Set<String>()
        for line in simulated.output.split(separator: "\n") {
            if let range = line.range(of: #""user":""#) {
                names.insert(String(line[range.upperBound...].prefix { $0 != "\"" }))
            }
        }
        return (daemon, rules, names.sorted())
    }

    /// Every report grouping at two times, and the explanation of `users`, as JSON text.
    static func outputs(db: String, rules: String, users: [String]) throws -> [String] {
        var outputs: [String] = []
        for by in ["affiliate", "campaign", "message", "day"] {
            for asOf in ["2026-07-20", asOf] {
                let report = try cli([
                    "report", "--db", db, "--rules", rules, "--by", by, "--as-of", asOf, "--format", "json",
                ])
                #expect(report.status == 0, "\(report.output)")
                outputs.append(report.output)
            }
        }
        for user in users {
            let explain = try cli([
                "explain", "--db", db, "--rules", rules, "--user", user, "--as-of", asOf, "--format", "json",
            ])
            outputs.append(explain.output)
        }
        return outputs
    }

    static func status(_ daemon: DaemonProcess) throws -> JSONObject? {
        let status = try cli(["status", "--db", daemon.databasePath, "--socket", daemon.socketPath, "--format", "json"])
        guard case .object(let object)? = try? JSONParser.parse(Array(status.output.utf8)) else { return nil }
        return object
    }

    static func record(_ id: String, ts: String) -> String {
        #"{"type":"capabilities","id":"\#(id)","ts":"\#(ts)","user":"late-user","authorization":"authorized","capabilities":2}"#
    }

    @Test func sealingChangesNoOutputAndRefusesWhatItMust() throws {
        let directory = ScratchDirectory()
        guard let (daemon, rules, users) = try Self.journal(directory, users: 300) else { return }
        defer { DaemonProcess.terminateCleanly([daemon]) }
        let db = daemon.databasePath
        let sample = Array(users.prefix(60))
        let before = try Self.outputs(db: db, rules: rules, users: sample)
        let exportBefore = directory.file("before")
        try FileManager.default.createDirectory(atPath: exportBefore, withIntermediateDirectories: true)
        #expect(
            try Self.cli(["export", "--db", db, "--rules", rules, "--date", "2026-06-10", "--out", exportBefore]).status
                == 0)
        // Two records the seal will keep: a conversion, and an unconverted user's latest check of the sealed days.
        let journal = try Connection(path: db, mode: .readOnly)
        let keptConversion = try #require(
            try journal.scalarText(
                "SELECT line FROM records WHERE type = 2 AND subscribed = 1 AND ts < \(Self.sealedBefore) LIMIT 1"))
        let keptCheck = try #require(
            try journal.scalarText(
                """
                SELECT id FROM records WHERE type = 0 AND ts < \(Self.sealedBefore) AND user NOT IN
                    (SELECT user FROM records WHERE type = 2 AND subscribed = 1) ORDER BY ts DESC, id DESC LIMIT 1
                """))
        let fresh = try #require(try Self.status(daemon))
        #expect(fresh["lastSealedDay"] == .null && fresh["acceptanceHorizon"] == .null)

        // Refusals: no --rules (64, before anything else), rules without retentionDays (nothing sealed, 0).
        let noRules = try Self.cli(["seal", "--db", directory.file("missing.db")])
        #expect(noRules.status == 64 && noRules.output.contains("--rules"), "\(noRules.output)")
        let keepForever = directory.file("forever.json")
        try #"{"currency":"USD","rules":[]}"#.write(toFile: keepForever, atomically: true, encoding: .utf8)
        let forever = try Self.cli(["seal", "--db", db, "--rules", keepForever, "--as-of", Self.asOf])
        #expect(forever.status == 0 && forever.output.contains("nothing sealed"), "\(forever.output)")

        // 2026-09-15 - 40 days: every day before 2026-08-06 is sealed; K = 31: the horizon is 2026-09-06.
        let sealed = try Self.cli(["seal", "--db", db, "--rules", rules, "--as-of", "2026-09-15"])
        #expect(sealed.status == 0, "\(sealed.output)")
        #expect(sealed.output.contains("sealed 66 days, 2026-06-01 to 2026-08-05"), "\(sealed.output)")
        let status = try #require(try Self.status(daemon))
        #expect(status["lastSealedDay"] == .string("2026-08-05"))
        #expect(status["acceptanceHorizon"] == .string("2026-09-06T00:00:00.000Z"))
        let again = try Self.cli(["seal", "--db", db, "--rules", rules, "--as-of", "2026-09-15"])
        #expect(again.status == 0 && again.output.contains("nothing to seal"), "\(again.output)")

        // Nothing observable changed.
        #expect(try Self.outputs(db: db, rules: rules, users: sample) == before)
        let exportAfter = directory.file("after")
        try FileManager.default.createDirectory(atPath: exportAfter, withIntermediateDirectories: true)
        #expect(try Self.cli(["export", "--db", db, "--date", "2026-06-10", "--out", exportAfter]).status == 0)
        for file in ["commissions-2026-06-10.csv", "commissions-2026-06-10.manifest.json"] {
            #expect(
                FileManager.default.contents(atPath: "\(exportBefore)/\(file)")
                    == FileManager.default.contents(atPath: "\(exportAfter)/\(file)"))
        }
        #expect(try Self.cli(["verify", "--db", db]).status == 0)

        // Every entry sealing kept (no `records` row) is in the sealed level with its sealed body, and `verify` reads
        // each: one that does not decode, in a copy, fails it.
        let bodies = try Connection(path: db, mode: .readOnly)
        let keptOutsideSealedLevel = """
            SELECT count(*) FROM (SELECT seq, ts, kind FROM by_user UNION ALL SELECT seq, ts, kind FROM by_user_recent) b
            WHERE b.ts < \(Self.sealedBefore) AND b.kind < 6 AND NOT EXISTS (SELECT 1 FROM records r WHERE r.seq = b.seq)
            """
        #expect(try bodies.scalarInt(keptOutsideSealedLevel) == 0)
        #expect(try bodies.scalarInt("SELECT count(*) FROM by_user_sealed") ?? 0 > 0)
        #expect(try bodies.scalarInt("SELECT count(*) FROM by_user_sealed WHERE substr(body, 1, 1) != x'01'") == 0)
        let broken = directory.file("broken.db")
        try bodies.execute("VACUUM INTO '\(broken)'")
        let copy = try Connection(path: broken, mode: .readWrite)
        try copy.execute(
            """
            UPDATE by_user_sealed SET body = x'01ff' WHERE (k, kind, ts, seq) =
                (SELECT k, kind, ts, seq FROM by_user_sealed ORDER BY k, kind, ts, seq LIMIT 1)
            """)
        let unreadable = try Self.cli(["verify", "--db", broken])
        #expect(unreadable.status != 0 && unreadable.output.contains("do not decode"), "\(unreadable.output)")

        // A journal sealed before schema 21 (its kept entries in `by_user`) is migrated by the next program that
        // writes to it: the entries move to the sealed level and nothing observable changes.
        let older = directory.file("older.db")
        try bodies.execute("VACUUM INTO '\(older)'")
        let sealedEntries = try #require(try bodies.scalarInt("SELECT count(*) FROM by_user_sealed"))
        do {
            let downgrade = try Connection(path: older, mode: .readWrite)
            try downgrade.execute(
                "INSERT INTO by_user SELECT * FROM by_user_sealed; DROP TABLE by_user_sealed; PRAGMA user_version = 20")
        }
        let migrated = try Self.cli(["rebuild", "--db", older, "--rules", rules])
        #expect(migrated.status == 0, "\(migrated.output)")
        let afterMigration = try Connection(path: older, mode: .readOnly)
        #expect(try afterMigration.scalarInt("SELECT count(*) FROM by_user_sealed") == sealedEntries)
        #expect(try afterMigration.scalarInt(keptOutsideSealedLevel) == 0)
        #expect(try Self.cli(["verify", "--db", older]).status == 0)
        #expect(try Self.outputs(db: older, rules: rules, users: sample) == before)

        // The daemon judges lines against the new horizon: before it expired, at it accepted.
        let answers = try LineClient(path: daemon.socketPath).exchange([
            Self.record("late-1", ts: "2026-09-05T23:59:59.999Z"), Self.record("late-2", ts: "2026-09-06T00:00:00Z"),
        ])
        #expect(
            answers.map(\.code) == ["expired", nil] && answers.map(\.status) == ["rejected", "accepted"], "\(answers)")

        // A record sealing kept is a sealed record all the same (SPEC 12): sent again it is `expired`, not a
        // duplicate, and `explain --id` answers for it only when the explanation names it.
        let resent = try LineClient(path: daemon.socketPath).exchange([keptConversion])
        #expect(resent.map(\.code) == ["expired"], "\(resent)")
        let conversionId = try #require(
            keptConversion.range(of: #""id":""#).map { String(keptConversion[$0.upperBound...].prefix { $0 != "\"" }) })
        let named = try Self.cli(["explain", "--db", db, "--rules", rules, "--id", conversionId, "--format", "json"])
        #expect(named.status == 0 && named.output.contains(conversionId), "\(named.output)")
        let unnamed = try Self.cli(["explain", "--db", db, "--rules", rules, "--id", keptCheck])
        #expect(unnamed.status == 66 && unnamed.output.contains("sealed day"), "\(unnamed.output)")

        // A bound inside a sealed day is exit 65; other windows are exit 78 for every command.
        let partial = try Self.cli(["report", "--db", db, "--rules", rules, "--since", "2026-07-01T05:00:00Z"])
        #expect(partial.status == 65 && partial.output.contains("2026-08-06"), "\(partial.output)")
        let otherWindow = directory.file("window.json")
        try #"{"currency":"USD","attributionWindowHours":100,"retentionDays":40,"rules":[]}"#.write(
            toFile: otherWindow, atomically: true, encoding: .utf8)
        for command in [["report"], ["explain", "--user", sample[0]], ["seal"], ["export", "--date", "2026-11-01"]] {
            let refused = try Self.cli(command + ["--db", db, "--rules", otherWindow])
            #expect(
                refused.status == 78 && refused.output.contains("attributionWindowHours"),
                "\(command): \(refused.output)")
        }
    }

    /// A seal SIGKILLed after any of its steps (the horizon, a day, a chunk of rows, a chunk of users) leaves every
    /// day sealed or not: `verify` passes, no output changed, and the next run finishes the job.
    @Test func aSealKilledAtAnyStepLeavesEveryDaySealedOrNot() throws {
        let directory = ScratchDirectory()
        guard let (daemon, rules, users) = try Self.journal(directory, users: 120) else { return }
        defer { DaemonProcess.terminateCleanly([daemon]) }
        let db = daemon.databasePath
        let sample = Array(users.prefix(40))
        let before = try Self.outputs(db: db, rules: rules, users: sample)
        let seal = ["seal", "--db", db, "--rules", rules, "--as-of", "2026-09-15"]
        // A run's steps: the horizon, each day not yet sealed (66 in all), each chunk of 40 rows (the 755 rows of
        // those days: 19), each chunk of 5 users, the last. The kills: after the horizon; after 29 days; after 19
        // more; after the last 18 days and 6 chunks of rows; after the other 13 and 7 chunks of users (the rows all
        // gone, users still holding entries no rule reads); after 3 more chunks of users (found again from their
        // entries: their rows are gone).
        for step in [1, 30, 20, 25, 20, 3] {
            let killed = try Self.cli(
                seal,
                environment: [
                    "OFFERTRACK_TEST_SEAL_KILL_AFTER_STEP": "\(step)", "OFFERTRACK_TEST_SEAL_USERS_PER_CHUNK": "5",
                    "OFFERTRACK_TEST_SEAL_ROWS_PER_CHUNK": "40",
                ])
            // Foundation's terminationStatus of a process killed by a signal is the signal's number.
            #expect(
                killed.status == 9 && killed.output.contains("SIGKILL after step \(step)"),
                "step \(step): \(killed.output)")
            #expect(try Self.cli(["verify", "--db", db]).status == 0, "after a kill at step \(step)")
            #expect(try Self.outputs(db: db, rules: rules, users: sample) == before, "after a kill at step \(step)")
        }
        let finished = try Self.cli(seal)
        #expect(finished.status == 0 && finished.output.contains("removed"), "\(finished.output)")
        let last = try #require(try Self.status(daemon))
        #expect(last["lastSealedDay"] == .string("2026-08-05"))
        #expect(try Self.cli(["verify", "--db", db]).status == 0)
        #expect(try Self.outputs(db: db, rules: rules, users: sample) == before)
    }
}
