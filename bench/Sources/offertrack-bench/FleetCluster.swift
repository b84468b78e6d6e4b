import Foundation
import Posix
import TestSupport

/// Three `nats-server` nodes (Debian's 2.9, JetStream) clustered on loopback, each on its own client and route
/// port and store under the bench's scratch directory: the stream of the fleet section. `kill()` and `start()`
/// keep the ports and stores, so a whole-stream outage and its end are a kill and a restart.
final class FleetCluster {
    static let serverPath = "/usr/sbin/nats-server"

    /// Whether this machine has the server (`scripts/install-deps test` installs it).
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: serverPath) }

    private let scratch: ScratchDirectory
    private let label: String
    private let clientPorts: [UInt16]
    private let routePorts: [UInt16]
    /// Each node's HTTP monitoring port (`/healthz`).
    private let monitorPorts: [UInt16]
    private var processes: [ChildProcess?]

    /// `nats://127.0.0.1:PORT,…`, the daemons' `--forward`/`--consume` argument.
    var servers: String { clientPorts.map { "nats://127.0.0.1:\($0)" }.joined(separator: ",") }

    /// Starts the three nodes and waits until each accepts connections.
    init(scratch: ScratchDirectory, label: String) throws {
        self.scratch = scratch
        self.label = label
        let ports = try FleetPorts.free(9)
        clientPorts = Array(ports[0..<3])
        routePorts = Array(ports[3..<6])
        monitorPorts = Array(ports[6..<9])
        processes = [nil, nil, nil]
        try start(waitHealthy: true)
    }

    deinit { kill() }

    /// Starts every node that is not running and waits until each listens; with `waitHealthy` also until each
    /// says JetStream is healthy (`/healthz`: it knows the meta leader and its assets are current), so that a new
    /// fleet's first stream and consumer calls do not meet an election. A restart after an outage does not wait
    /// for that: the daemons' recovery is part of what the bench measures.
    func start(waitHealthy: Bool = false) throws {
        let routes = routePorts.map { "nats-route://127.0.0.1:\($0)" }.joined(separator: ",")
        for index in 0..<3 where processes[index] == nil {
            let name = "\(label)-n\(index + 1)"
            do {
                processes[index] = try ChildProcess(
                    [
                        Self.serverPath, "-js", "-a", "127.0.0.1", "-p", String(clientPorts[index]), "-m",
                        String(monitorPorts[index]), "-sd",
                        scratch.file("nats-\(name)"), "-n", name, "--cluster_name", label, "--cluster",
                        "nats://127.0.0.1:\(routePorts[index])", "--routes", routes,
                    ], environment: ["PATH": "/usr/bin:/bin"], stderrPath: scratch.file("nats-\(name).log"))
            } catch {
                throw BenchFailure("cannot start nats-server: \(error)")
            }
        }
        for port in clientPorts {
            let deadline = Stopwatch.now() + 10_000_000_000
            while true {
                if let fd = try? TCPSocket.connect(host: "127.0.0.1", port: port) {
                    FileDescriptor.close(fd)
                    break
                }
                guard Stopwatch.now() < deadline else { throw BenchFailure("nats-server did not listen on \(port)") }
                Stopwatch.sleep(seconds: 0.02)
            }
        }
        for port in monitorPorts where waitHealthy {
            let deadline = Stopwatch.now() + 30_000_000_000
            while !Self.healthy(monitorPort: port) {
                guard Stopwatch.now() < deadline else {
                    throw BenchFailure("nats-server (monitoring port \(port)) was not healthy within 30 s")
                }
                Stopwatch.sleep(seconds: 0.05)
            }
        }
    }

    /// `GET /healthz` answers `{"status":"ok"}`.
    private static func healthy(monitorPort: UInt16) -> Bool {
        guard let response = LoopbackHTTP.get("/healthz", port: monitorPort) else { return false }
        return String(decoding: response, as: UTF8.self).contains(#""status":"ok""#)
    }

    /// The messages the stream `name` holds, as the first node that answers its monitor's `/jsz` says; nil when
    /// none does.
    func streamMessages(_ name: String = "OFFERTRACK") -> UInt64? {
        for port in monitorPorts {
            guard let response = LoopbackHTTP.get("/jsz?accounts=true&streams=true", port: port),
                let start = response.firstIndex(of: UInt8(ascii: "{")),
                let json = try? JSONSerialization.jsonObject(with: Data(response[start...])) as? [String: Any],
                let accounts = json["account_details"] as? [[String: Any]]
            else { continue }
            for account in accounts {
                for stream in account["stream_detail"] as? [[String: Any]] ?? [] where stream["name"] as? String == name
                {
                    if let messages = (stream["state"] as? [String: Any])?["messages"] as? NSNumber {
                        return messages.uint64Value
                    }
                }
            }
        }
        return nil
    }

    /// Kills every node (`kill -9`) and waits until they are gone: the whole stream is down.
    func kill() {
        for index in 0..<3 {
            guard let process = processes[index] else { continue }
            Signals.send(Signals.kill, to: process.pid)
            _ = process.wait()
            processes[index] = nil
        }
    }

    /// The nodes' process ids (for their memory).
    var pids: [Int32] { processes.compactMap { $0?.pid } }
}

/// Loopback ports nobody listens on now.
enum FleetPorts {
    static func free(_ count: Int) throws -> [UInt16] {
        var probes: [Int32] = []
        defer { probes.forEach { FileDescriptor.close($0) } }
        var ports: [UInt16] = []
        for _ in 0..<count {
            let fd = try TCPSocket.listen(host: "127.0.0.1", port: 0)
            probes.append(fd)
            ports.append(try TCPSocket.port(of: fd))
        }
        return ports
    }
}
