import Foundation
import Posix
import SQLite
import TestSupport
import Testing

/// The rules file under the daemon: refused at start when malformed, kept on a bad SIGHUP reload.
@Suite struct RulesReloadTests {
    static let goodRules =
        #"{"currency":"USD","attributionWindowHours":2,"eligibilityFreshnessHours":1,"rules":[{"affiliateToken":"*","amountMinor":500}]}"#

    /// The windows the daemon's derived tables were computed with (`meta`), in milliseconds.
    static func derivedWindows(_ path: String) throws -> [String] {
        let connection = try Connection(path: path, mode: .readOnly)
        return try ["derived_window_ms", "derived_freshness_ms"].map { key in
            try connection.scalarText("SELECT value FROM meta WHERE key = '\(key)'") ?? "absent"
        }
    }

    @Test func aMalformedRulesFileRefusesToStartWithExit78() throws {
        let directory = ScratchDirectory()
        let rules = directory.file("rules.json")
        try #"{"currency":"USD","rules":[{"affiliateToken":"*","amountMinor":-1}]}"#.write(
            toFile: rules, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules])
        #expect(daemon.waitExit() == 78)
        #expect(daemon.stderr.contains("rules[0]"), "\(daemon.stderr)")
    }

    @Test func aCorruptRulesFileOnSighupKeepsTheOldRulesAndSaysSo() throws {
        let directory = ScratchDirectory()
        let rules = directory.file("rules.json")
        try Self.goodRules.write(toFile: rules, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules])
        guard daemon.waitReady() else { return }
        #expect(try Self.derivedWindows(daemon.databasePath) == ["7200000", "3600000"])
        // Other windows, but the file is cut short: nothing of it may apply.
        try
            #"{"currency":"USD","attributionWindowHours":9,"eligibilityFreshnessHours":9,"rules":[{"affiliateToken":"*","amountMinor":5}"#
            .write(toFile: rules, atomically: true, encoding: .utf8)
        daemon.notify.reset()
        daemon.signal(Signals.hangup)
        let ready = try #require(daemon.notify.waitFor(line: "READY=1"))
        #expect(ready.contains("RULES RELOAD FAILED"), "\(ready)")
        #expect(daemon.stderr.contains("keeping the previous rules"))
        // The old windows still apply: the derived tables keep them, also after records are joined meanwhile.
        let during = try LineClient(path: daemon.socketPath).exchange([
            TestRecords.capabilities(id: "k-1", user: "keep", ts: "2026-11-28T10:00:00Z"),
            TestRecords.presented(id: "k-2", user: "keep", ts: "2026-11-28T10:01:00Z"),
        ])
        #expect(during.map(\.status) == ["accepted", "accepted"])
        #expect(try Self.derivedWindows(daemon.databasePath) == ["7200000", "3600000"])
        // A good file clears the warning.
        try Self.goodRules.write(toFile: rules, atomically: true, encoding: .utf8)
        daemon.notify.reset()
        daemon.signal(Signals.hangup)
        let again = try #require(daemon.notify.waitFor(line: "READY=1"))
        #expect(!again.contains("RULES RELOAD FAILED"), "\(again)")
        let client = try LineClient(path: daemon.socketPath)
        #expect(client.exchange([TestRecords.capabilities(id: "r-1")]).map(\.status) == ["accepted"])
    }

    /// New windows on SIGHUP: the writer recomputes the derived tables a chunk of users at a time between
    /// batches, so records sent meanwhile are acknowledged before READY=1 (not held until it), the watchdog is
    /// fed, and when it is done the derived tables equal a fresh recomputation under the new windows, with the
    /// records journaled during the recompute joined in (for users the copy had reached and for those it had not).
    @Test func newWindowsAreRecomputedWhileRecordsKeepBeingAcknowledged() throws {
        let directory = ScratchDirectory()
        let rules = directory.file("rules.json")
        try Self.goodRules.write(toFile: rules, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(
            in: directory, arguments: ["--rules", rules], environment: ["WATCHDOG_USEC": "100000"])
        guard daemon.waitReady() else { return }
        let lines = try Shell.run(Binaries.cli, ["simulate", "--users", "30000", "--seed", "5"]).output
            .split(separator: "\n").map(String.init)
        // Most of the journal first; the rest (later records of the same users, and new users) during the reload.
        let split = lines.count * 9 / 10
        let workload = directory.file("workload.ndjson")
        try lines[..<split].joined(separator: "\n").write(toFile: workload, atomically: true, encoding: .utf8)
        let ingest = try Shell.run(Binaries.cli, ["ingest", workload, "--socket", daemon.socketPath])
        #expect(ingest.status == 0, "\(ingest.output)")
        try #"{"currency":"USD","attributionWindowHours":48,"eligibilityFreshnessHours":12,"rules":[]}"#
            .write(toFile: rules, atomically: true, encoding: .utf8)
        let client = try LineClient(path: daemon.socketPath)
        daemon.notify.reset()
        daemon.signal(Signals.hangup)
        _ = try #require(daemon.notify.waitFor(line: "RELOADING=1"))
        var answeredAt: [Double] = []
        var statuses: [String: Int] = [:]
        for piece in stride(from: split, to: lines.count, by: 50) {
            let answers = client.exchange(Array(lines[piece..<min(piece + 50, lines.count)]))
            answeredAt.append(Date().timeIntervalSinceReferenceDate)
            for answer in answers { statuses[answer.status, default: 0] += 1 }
        }
        _ = try #require(daemon.notify.waitFor(line: "READY=1", timeout: 120))
        let reloading = try #require(daemon.notify.arrivals(of: "RELOADING=1").first)
        let ready = try #require(daemon.notify.arrivals(of: "READY=1").first)
        let pings = daemon.notify.arrivals(of: "WATCHDOG=1").filter { $0 > reloading && $0 < ready }
        // Answers keep coming while the recompute runs: the longest wait for one is a small part of it.
        let during = [reloading] + answeredAt.filter { $0 < ready }
        let longestWait = zip(during, during.dropFirst()).map { $1 - $0 }.max() ?? (ready - reloading)
        print(
            "SIGHUP recompute: \(ready - reloading) s, \(pings.count) WATCHDOG=1 meanwhile, "
                + "\(during.count - 1) of \(answeredAt.count) exchanges of 50 records answered before READY=1, "
                + "longest wait \(longestWait) s")
        #expect(statuses.values.reduce(0, +) == lines.count - split && statuses["rejected"] == nil, "\(statuses)")
        #expect(during.count >= 5, "records waited for the recompute")
        #expect(longestWait < (ready - reloading) / 4, "an answer waited \(longestWait) s of the recompute's")
        #expect(pings.count >= 1, "the watchdog was not fed during the recompute")
        #expect(try Self.derivedWindows(daemon.databasePath) == ["172800000", "43200000"])
        let verify = try Shell.run(Binaries.cli, ["verify", "--db", daemon.databasePath])
        #expect(verify.status == 0, "\(verify.output)")
        #expect(verify.output.contains("ok: derived tables equal a fresh recomputation"), "\(verify.output)")
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
    }
}
