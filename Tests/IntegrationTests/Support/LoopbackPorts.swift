import Foundation
import Posix

/// Loopback ports for servers the tests start and restart (NATS nodes, their routes).
///
/// A port the kernel hands out for `bind(0)` comes from the ephemeral range, which is also where every
/// outgoing connection takes its local port: while a server is down (or before it has bound its route port),
/// a client of another test reconnecting can take its port, and the server cannot come back. Ports below the
/// ephemeral range are never given to a connection, only to whoever binds them by number.
enum LoopbackPorts {
    /// `count` distinct ports below the ephemeral range that nobody listens on now.
    static func unused(_ count: Int) throws -> [UInt16] {
        let lowestEphemeral = ephemeralRange().lowerBound
        let candidates = lowestEphemeral > 11_024 ? 10_000...(lowestEphemeral - 1) : 1_024...(lowestEphemeral - 1)
        var held: [Int32] = []
        defer { held.forEach { FileDescriptor.close($0) } }
        var ports: [UInt16] = []
        while ports.count < count {
            let port = UInt16.random(in: candidates)
            guard let fd = try? TCPSocket.listen(host: "127.0.0.1", port: port) else { continue }
            held.append(fd)
            ports.append(port)
        }
        return ports
    }

    /// A loopback port nobody listens on now (bind to 0 and read the port back): one of the ephemeral range, for a
    /// server that is not restarted.
    static func ephemeral() throws -> UInt16 {
        let fd = try TCPSocket.listen(host: "127.0.0.1", port: 0)
        defer { FileDescriptor.close(fd) }
        return try TCPSocket.port(of: fd)
    }

    /// `net.ipv4.ip_local_port_range` (Linux's default when it cannot be read).
    static func ephemeralRange() -> ClosedRange<UInt16> {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let bounds = text.split(whereSeparator: \.isWhitespace).compactMap { UInt16($0) }
        guard bounds.count == 2, bounds[0] <= bounds[1], bounds[0] > 2_048 else { return 32_768...60_999 }
        return bounds[0]...bounds[1]
    }
}
