import TestSupport
import Testing

/// Fleets of real daemons on a test's `nats-server`: central daemons and edges started and ready, and what their
/// central journals hold.
enum TestFleet {
    /// Every test fleet's partitions and stream: 4 partitions, a stream of one replica.
    static let common = ["--partitions-total", "4", "--stream-replicas", "1"]

    /// The fleet tests' rules: 300 for every affiliate token, held 24 h.
    static let rules = #"{"currency":"USD","holdingPeriodHours":24,"rules":[{"affiliateToken":"*","amountMinor":300}]}"#

    /// Two central daemons (partitions 0-1 and 2-3 of 4) and an edge on `server`, ready; nil when one did not
    /// start. Each daemon keeps its scratch directory.
    static func twoCentralsAndAnEdge(_ server: NATSServer, extra: [String] = []) throws -> (
        [DaemonProcess], DaemonProcess
    )? {
        let flags = common + extra
        let centrals = try [("0-1", "ot-central-a"), ("2-3", "ot-central-b")].map { partitions, label in
            try DaemonProcess(
                in: ScratchDirectory(label), arguments: ["--consume", server.url, "--partitions", partitions] + flags)
        }
        let edge = try DaemonProcess(in: ScratchDirectory("ot-edge"), arguments: ["--forward", server.url] + flags)
        guard (centrals + [edge]).allSatisfy({ $0.waitReady() }) else { return nil }
        return (centrals, edge)
    }

    /// A central daemon for every partition and two edges on `server`.
    static func aCentralAndTwoEdges(_ server: NATSServer) throws -> (central: DaemonProcess, edges: [DaemonProcess])? {
        let central = try DaemonProcess(
            in: ScratchDirectory("ot-central"), arguments: ["--consume", server.url, "--partitions", "0-3"] + common)
        guard central.waitReady() else { return nil }
        let edges = try ["ot-edge-a", "ot-edge-b"].map {
            try DaemonProcess(in: ScratchDirectory($0), arguments: ["--forward", server.url] + common)
        }
        guard edges.allSatisfy({ $0.waitReady() }) else { return nil }
        return (central, edges)
    }

    /// A central daemon for `partitions` of 4 on `server`, with a metrics socket; nil when it did not start.
    static func central(
        _ server: NATSServer, in directory: ScratchDirectory, partitions: String = "0-3", extra: [String] = [],
        notify: NotifyListener? = nil
    ) throws -> DaemonProcess? {
        let central = try DaemonProcess(
            in: directory,
            arguments: [
                "--consume", server.url, "--partitions", partitions, "--partitions-total", "4", "--stream-replicas",
                "1",
                "--metrics-listen", directory.file("m.sock"),
            ] + extra, notify: notify)
        guard central.waitReady() else { return nil }
        return central
    }

    /// Every central journal's lines, together.
    static func centralLines(_ centrals: [DaemonProcess]) throws -> [String] {
        try centrals.flatMap { try JournalInspector.lines(of: $0.databasePath) }
    }
}
