import Foundation
import Posix
import TestSupport
import Testing

/// Runs one hostile client against a fresh daemon while a `ServiceProbe` is served beside it, then checks what
/// every attack must leave intact: the probe's latency, the daemon's peak memory, a clean stop, and every
/// acknowledged record journaled with its `seq`.
enum AttackHarness {
    /// The daemon's peak RSS (`VmHWM`) may not exceed this under any attack; docs/durability-and-limits.md, "Limits under attack".
    static let peakResidentBoundMiB = 150.0
    /// One round of the event loop over 1,024 connections, each served up to 64 lines a wakeup: the most work a
    /// well-behaved client's line can wait behind (docs/durability-and-limits.md, "Limits under attack").
    static let roundLines = 1024 * 64

    /// Starts a daemon with `arguments`, runs `attack` against it (which returns the acknowledgements its own
    /// clients received, to check against the journal) and checks the invariants. Returns the stopped daemon.
    /// The longest one small exchange of the well-behaved client may take under attack is four times the
    /// reference (one client's `roundLines` rejections, measured on the same daemon before the attack), plus
    /// `extraLatency` for attacks that stop the daemon itself (the probe then waits for it to resume).
    @discardableResult
    static func run(
        arguments: [String] = [], launcher: [String] = [], extraLatency: Duration = .zero,
        sourceLocation: SourceLocation = #_sourceLocation,
        attack: (DaemonProcess) throws -> [Answer]
    ) throws -> DaemonProcess? {
        let directory = ScratchDirectory("ot-attack")
        // A launcher (e.g. `prlimit`) gets `--socket` explicitly: DaemonProcess passes it only without one.
        let socket = launcher.isEmpty ? [] : ["--socket", directory.file("offertrack.sock")]
        let daemon = try DaemonProcess(in: directory, arguments: socket + arguments, launcher: launcher)
        guard daemon.waitReady(sourceLocation: sourceLocation) else { return nil }
        // The reference: one client's round of invalid lines, rejected and read back, before any attack.
        let clock = ContinuousClock()
        let started = clock.now
        let rejected = try LineClient(path: daemon.socketPath).exchange(Array(repeating: "x", count: roundLines))
        let round = clock.now - started
        #expect(rejected.count == roundLines, sourceLocation: sourceLocation)
        let latencyBound = round * 4 + extraLatency
        // The probe waits for an answer as long as the bound allows (judged below), up to 10 minutes against a hang.
        let probe = try ServiceProbe(
            socketPath: daemon.socketPath,
            receiveTimeoutSeconds: Int(min(latencyBound, .seconds(600)).components.seconds) + 1)
        let acknowledged = try attack(daemon)
        probe.waitForExchanges(3, timeout: 5)
        let report = probe.stop()
        let status = ProcessStatus(pid: daemon.pid)
        let peak = status.peakResidentMiB ?? .infinity

        #expect(
            report.failures.isEmpty, "the probe was not served: \(report.failures.prefix(3))",
            sourceLocation: sourceLocation)
        #expect(
            report.exchanges >= 3, "the probe made only \(report.exchanges) exchanges", sourceLocation: sourceLocation)
        #expect(
            report.worstLatency < latencyBound,
            "the probe waited \(report.worstLatency) for one answer (bound \(latencyBound); a round \(round))",
            sourceLocation: sourceLocation)
        #expect(
            peak < peakResidentBoundMiB, "the daemon's peak RSS was \(peak) MiB", sourceLocation: sourceLocation)
        print(
            "attack: probe \(report.exchanges) exchanges, worst \(report.worstLatency) (a round of \(roundLines) "
                + "rejections alone: \(round)); daemon peak RSS \(peak) MiB")

        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0, "stderr: \(daemon.stderr)", sourceLocation: sourceLocation)
        let inspector = try JournalInspector(path: daemon.databasePath)
        #expect(try inspector.integrityCheck() == "ok", sourceLocation: sourceLocation)
        let journal = try inspector.seqByID()
        let acks = (report.acknowledged + acknowledged).filter { $0.status == "accepted" || $0.status == "duplicate" }
        let lost = acks.filter { $0.seq == nil || journal[$0.id ?? ""] != $0.seq }
        #expect(lost.isEmpty, "acknowledged but not journaled: \(lost.prefix(3))", sourceLocation: sourceLocation)
        return daemon
    }
}
