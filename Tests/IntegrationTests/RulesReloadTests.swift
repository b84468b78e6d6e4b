import Foundation
import Posix
import Testing

/// The rules file under the daemon: refused at start when malformed, kept on a bad SIGHUP reload.
@Suite struct RulesReloadTests {
    static let goodRules = #"{"currency":"USD","rules":[{"affiliateToken":"*","amountMinor":500}]}"#

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
        try #"{"currency":"USD","rules":[{"affiliateToken":"*","amountMinor":5}"#.write(
            toFile: rules, atomically: true, encoding: .utf8)
        daemon.notify.reset()
        daemon.signal(Signals.hangup)
        let ready = try #require(daemon.notify.waitFor(line: "READY=1"))
        #expect(ready.contains("RULES RELOAD FAILED"), "\(ready)")
        #expect(daemon.stderr.contains("keeping the previous rules"))
        // A good file clears the warning.
        try Self.goodRules.write(toFile: rules, atomically: true, encoding: .utf8)
        daemon.notify.reset()
        daemon.signal(Signals.hangup)
        let again = try #require(daemon.notify.waitFor(line: "READY=1"))
        #expect(!again.contains("RULES RELOAD FAILED"), "\(again)")
        let client = try LineClient(path: daemon.socketPath)
        #expect(client.exchange([TestRecords.capabilities(id: "r-1")]).map(\.status) == ["accepted"])
    }
}
