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

    /// New windows on SIGHUP: the derived tables are recomputed on the writer thread while the event loop
    /// keeps answering and feeding the watchdog; READY=1 comes when the recompute is done.
    @Test func newWindowsAreRecomputedWhileTheDaemonKeepsServing() throws {
        let directory = ScratchDirectory()
        let rules = directory.file("rules.json")
        try Self.goodRules.write(toFile: rules, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(
            in: directory, arguments: ["--rules", rules], environment: ["WATCHDOG_USEC": "100000"])
        guard daemon.waitReady() else { return }
        let workload = directory.file("workload.ndjson")
        let simulate = try Shell.run(Binaries.cli, ["simulate", "--users", "12000", "--seed", "5"])
        try simulate.output.write(toFile: workload, atomically: true, encoding: .utf8)
        let ingest = try Shell.run(Binaries.cli, ["ingest", workload, "--socket", daemon.socketPath])
        #expect(ingest.status == 0, "\(ingest.output)")
        try #"{"currency":"USD","attributionWindowHours":48,"eligibilityFreshnessHours":12,"rules":[]}"#
            .write(toFile: rules, atomically: true, encoding: .utf8)
        let client = try LineClient(path: daemon.socketPath)
        daemon.notify.reset()
        daemon.signal(Signals.hangup)
        _ = try #require(daemon.notify.waitFor(line: "RELOADING=1"))
        // Answered while the recompute runs (before READY=1), not after it.
        try client.send("{\n")
        let answer = client.readAnswer()
        let answeredAt = Date().timeIntervalSinceReferenceDate
        #expect(answer?.code == "invalid_json")
        _ = try #require(daemon.notify.waitFor(line: "READY=1", timeout: 120))
        let reloading = try #require(daemon.notify.arrivals(of: "RELOADING=1").first)
        let ready = try #require(daemon.notify.arrivals(of: "READY=1").first)
        let pings = daemon.notify.arrivals(of: "WATCHDOG=1").filter { $0 > reloading && $0 < ready }
        print("SIGHUP recompute: \(ready - reloading) s, \(pings.count) WATCHDOG=1 meanwhile")
        #expect(ready - reloading > 0.2, "the recompute was too quick to show anything: \(ready - reloading) s")
        #expect(answeredAt < ready, "the line was answered only after the recompute")
        #expect(pings.count >= 1, "the watchdog was not fed during the recompute")
        #expect(try Self.derivedWindows(daemon.databasePath) == ["172800000", "43200000"])
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
    }
}
