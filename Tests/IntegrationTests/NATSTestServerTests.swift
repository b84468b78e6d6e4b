import Foundation
import Posix
import TestSupport
import Testing

/// The tests' own stream servers: their ports are ones no outgoing connection can take, and a cluster node that
/// cannot bind its route port fails the test that starts it, naming the port, instead of leaving a smaller
/// cluster behind (nats-server listens for clients first, then exits when the route port is taken).
@Suite struct NATSTestServerTests {
    /// (Whether each was free when chosen is not checked again here: a child another test spawns at that moment
    /// holds a copy of every open descriptor until it execs, so a port just released can be held a moment more.)
    @Test func portsAreDistinctAndBelowTheEphemeralRange() throws {
        let ports = try LoopbackPorts.unused(6)
        #expect(Set(ports).count == 6)
        #expect(ports.allSatisfy { $0 >= 1_024 && $0 < LoopbackPorts.ephemeralRange().lowerBound }, "\(ports)")
    }

    @Test func aNodeWhoseRoutePortIsTakenIsAnError() throws {
        let directory = ScratchDirectory()
        let ports = try LoopbackPorts.unused(2)
        let taken = try TCPSocket.listen(host: "127.0.0.1", port: ports[1])
        defer { FileDescriptor.close(taken) }
        let route = "nats://127.0.0.1:\(ports[1])"
        #expect {
            _ = try NATSServer(
                in: directory, name: "c1", port: ports[0], routePort: ports[1],
                extra: [
                    "--cluster_name", "taken", "--cluster", route, "--routes", "nats-route://127.0.0.1:\(ports[1])",
                ])
        } throws: { error in
            "\(error)".contains("\"\(ports[1])\"]") && "\(error)".contains("(exited)")
        }
    }
}
