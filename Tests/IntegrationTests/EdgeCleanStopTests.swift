import Foundation
import OfferTrackDomain
import Posix
import Simulator
import TestSupport
import Testing

/// A clean stop (SIGTERM) leaves no `-wal` or `-shm`: the daemon's last connection to close checkpoints the journal and
/// removes its WAL, for an edge (`--forward`) whose stream cannot be reached as for a plain daemon, so that a copy
/// of the `.db` alone is the whole journal.
@Suite(.serialized) struct EdgeCleanStopTests {
    enum Stream: String, CaseIterable {
        /// No `--forward`: the baseline.
        case none
        /// `--forward` to a loopback port nobody listens on.
        case closedPort
        /// `--forward` to a real nats-server, killed after the first records were forwarded.
        case serverStopped
    }

    @Test(arguments: Stream.allCases)
    func aCleanStopRemovesTheWALAndTheDatabaseAloneIsTheJournal(stream: Stream) throws {
        let directory = ScratchDirectory("ot-clean-stop")
        let lines = Array(
            WorkloadSimulator(users: 150, seed: 31).filter { !$0.isDuplicate && $0.record.type != .erasure }.map(\.line)
        )
        let half = lines.count / 2
        let fleet = ["--partitions-total", "4", "--stream-replicas", "1"]
        var server: NATSServer?
        let arguments: [String]
        switch stream {
        case .none: arguments = []
        case .closedPort: arguments = ["--forward", "nats://127.0.0.1:\(try LoopbackPorts.unused(1)[0])"] + fleet
        case .serverStopped:
            let started = try NATSServer(in: directory)
            server = started
            arguments = ["--forward", started.url] + fleet
        }
        let daemon = try DaemonProcess(in: directory, arguments: arguments)
        guard daemon.waitReady() else { return }
        let client = try LineClient(path: daemon.socketPath)
        #expect(client.exchange(Array(lines[..<half])).allSatisfy { $0.status == "accepted" })
        if let server {
            // The first half reaches the stream, then the stream goes away with the second half unforwarded.
            let forwarded = #""forward":{"acknowledgedThrough":\#(half),"lagRecords":0,"#
            #expect(try eventually { try Self.status(daemon).contains(forwarded) })
            server.stop()
        }
        #expect(client.exchange(Array(lines[half...])).allSatisfy { $0.status == "accepted" })

        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
        let fileManager = FileManager.default
        #expect(fileManager.fileExists(atPath: daemon.databasePath))
        for suffix in ["-wal", "-shm"] {
            #expect(!fileManager.fileExists(atPath: daemon.databasePath + suffix), "\(stream): \(suffix) left behind")
        }

        // A copy of the .db alone opens, verifies and holds every acknowledged record (and, for an edge, how far
        // the stream acknowledged).
        let copy = directory.file("copy.db")
        try fileManager.copyItem(atPath: daemon.databasePath, toPath: copy)
        let verify = try Shell.run(Binaries.cli, ["verify", "--db", copy])
        #expect(verify.status == 0, "\(stream): \(verify.output)")
        #expect(try JournalInspector(path: copy).count() == Int64(lines.count))
        if stream != .none {
            let acknowledged = server == nil ? 0 : half
            let status = try Self.status(copy: copy)
            #expect(status.contains(#""forward":{"acknowledgedThrough":\#(acknowledged),"#), "\(stream): \(status)")
        }
        withExtendedLifetime(directory) {}
    }

    /// `offertrack status --format json` of the running daemon's journal.
    static func status(_ daemon: DaemonProcess) throws -> String {
        try Shell.run(
            Binaries.cli, ["status", "--db", daemon.databasePath, "--socket", daemon.socketPath, "--format", "json"]
        ).output
    }

    /// `offertrack status --format json` of a journal no daemon serves.
    static func status(copy: String) throws -> String {
        try Shell.run(Binaries.cli, ["status", "--db", copy, "--format", "json"]).output
    }
}
