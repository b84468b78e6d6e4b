import Foundation
import TestSupport
import Testing

/// A running daemon whose journal holds a day's records ingested with `offertrack ingest`, to export.
enum IngestedDaemon {
    /// USD, a 720 h attribution window, a 24 h freshness, 500 for every affiliate token.
    static let rules =
        #"{"currency":"USD","attributionWindowHours":720,"eligibilityFreshnessHours":24,"rules":[{"affiliateToken":"*","amountMinor":500}]}"#

    /// Ingests `lines` into a fresh daemon's journal in `directory`, leaving it running.
    static func start(in directory: ScratchDirectory, rules: String, lines: [String]) throws -> DaemonProcess? {
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules])
        guard daemon.waitReady() else { return nil }
        let file = directory.file("busy-day.ndjson")
        try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let ingest = try Shell.run(Binaries.cli, ["ingest", file, "--socket", daemon.socketPath])
        #expect(ingest.status == 0, "\(ingest.output)")
        return daemon
    }

    /// Ingests `offertrack simulate SIMULATION` into a fresh daemon's journal in `directory` under the rules file at
    /// `rulesPath`, leaving it running.
    static func simulated(in directory: ScratchDirectory, rulesPath: String, _ simulation: String) throws
        -> DaemonProcess?
    {
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rulesPath])
        guard daemon.waitReady() else { return nil }
        let ingest = try Shell.run(
            "/bin/sh",
            ["-c", #""$0" simulate \#(simulation) | "$0" ingest - --socket "$1""#, Binaries.cli, daemon.socketPath])
        #expect(ingest.status == 0 && ingest.output.contains("rejected 0"), "\(ingest.output)")
        return daemon
    }
}
