import Foundation
import OfferTrackDomain
import Posix
import TestSupport

/// A fleet as SPEC section 10 deploys it, on this machine: a three-node JetStream cluster (R3 stream), two edge
/// daemons (`--forward`) and two central daemons (`--consume`, partitions 0–7 and 8–15 of 16) or one (all 16),
/// each daemon with its metrics endpoint on loopback. Every daemon and server is the release binary on the real disk.
final class FleetUnderTest {
    static let partitionsTotal = 16

    let cluster: FleetCluster
    let edges: [DaemonProcess]
    let centrals: [DaemonProcess]
    let edgeMetricsPorts: [UInt16]
    let centralMetricsPorts: [UInt16]

    init(
        daemonPath: String, scratch: ScratchDirectory, label: String, centralCount: Int = 2,
        newDatabase: () -> String
    ) throws {
        cluster = try FleetCluster(scratch: scratch, label: label)
        let ports = try FleetPorts.free(2 + centralCount)
        edgeMetricsPorts = Array(ports[0..<2])
        centralMetricsPorts = Array(ports[2...])
        let common = ["--partitions-total", String(Self.partitionsTotal)]
        let servers = cluster.servers
        edges = try (0..<2).map { index in
            try DaemonProcess(
                binary: daemonPath, scratch: scratch, databasePath: newDatabase(), label: "\(label)-edge-\(index)",
                arguments: [
                    "--forward", servers, "--stream-replicas", "3", "--metrics-listen",
                    "127.0.0.1:\(ports[index])",
                ] + common)
        }
        let half = Self.partitionsTotal / 2
        let partitions =
            centralCount == 1
            ? ["0-\(Self.partitionsTotal - 1)"] : ["0-\(half - 1)", "\(half)-\(Self.partitionsTotal - 1)"]
        centrals = try (0..<centralCount).map { index in
            try DaemonProcess(
                binary: daemonPath, scratch: scratch, databasePath: newDatabase(),
                label: "\(label)-central-\(index)",
                arguments: [
                    "--consume", servers, "--partitions", partitions[index], "--metrics-listen",
                    "127.0.0.1:\(ports[2 + index])",
                ] + common)
        }
    }

    var edgeSockets: [String] { edges.map(\.socketPath) }

    /// The CPU seconds each kind of process has used so far: the edges, the stream servers, the centrals.
    func cpuSeconds() -> (edges: Double, servers: Double, centrals: Double) {
        let sum = { (pids: [Int32]) in pids.reduce(0) { $0 + (ProcessCPU.seconds(pid: $1) ?? 0) } }
        return (sum(edges.map(\.pid)), sum(cluster.pids), sum(centrals.map(\.pid)))
    }
    var centralJournals: [String] { centrals.map(\.databasePath) }

    /// Sends each edge one record for each central daemon and waits until both central journals hold them all:
    /// the stream exists, and every consumer is bound. Returns the records sent.
    func warmUp(timeoutSeconds: Double = 120) throws -> Int64 {
        let half = Self.partitionsTotal / 2
        let candidates = (0..<1000).map { "fleet-warmup-\($0)" }
        guard let low = candidates.first(where: { Partition.of(user: $0, total: Self.partitionsTotal) < half }),
            let high = candidates.first(where: { Partition.of(user: $0, total: Self.partitionsTotal) >= half })
        else { throw BenchFailure("no warm-up users for both halves of the partitions") }
        for (number, edge) in edges.enumerated() {
            let ids = [low, high].map { "warmup-\(number)-\($0)" }
            var payload: [UInt8] = []
            for (id, user) in zip(ids, [low, high]) {
                let line = #"{"type":"capabilities","id":"\#(id)","ts":"2026-11-20T00:00:00Z","user":"\#(user)","#
                payload += Array((line + #""authorization":0}"#).utf8) + [0x0A]
            }
            let fd = try UnixSocket.connect(path: edge.socketPath)
            defer { FileDescriptor.close(fd) }
            UnixSocket.setReceiveTimeout(fd, seconds: 30)
            try FileDescriptor.writeAll(fd, payload)
            let reader = AckReader(fd: fd)
            try reader.read(ids.count) { line, index in
                let id = Array(ids[index].utf8)
                guard AcceptedAnswer.matches(line, id: id) else { throw AcceptedAnswer.failure(line, id: id) }
            }
        }
        let sent = Int64(2 * edges.count)
        let watch = CentralWatch(paths: centralJournals, recordIDs: false)
        let deadline = Stopwatch.now() + UInt64(timeoutSeconds * 1e9)
        while watch.pollNow() < sent {
            guard Stopwatch.now() < deadline else {
                throw BenchFailure(
                    "the fleet's warm-up records did not reach the central journals in \(timeoutSeconds) s; "
                        + "an edge's stderr:\n\(edges[0].log)\na central's stderr:\n\(centrals[0].log)")
            }
            Stopwatch.sleep(seconds: 0.02)
        }
        return sent
    }

    /// Stops the daemons (SIGTERM, each must exit 0), then the stream servers.
    func stop() throws {
        for daemon in edges + centrals { try daemon.stop() }
        cluster.kill()
    }
}
