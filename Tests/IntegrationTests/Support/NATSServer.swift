import Foundation
import NATS
import Posix
import TestSupport

/// A real `nats-server` (Debian's 2.9) with JetStream on a loopback port and a scratch store, stopped when
/// released; `stop()` and `start()` again keep its port and store (a stream outage and its end).
final class NATSServer {
    let port: UInt16
    /// A cluster node's route port: it must listen too (nats-server exits when it cannot bind it).
    let routePort: UInt16?
    let url: String
    /// Its JetStream store (`-sd`): in `directory`, or under the `storeBase` given (another disk).
    let store: String
    private let directory: ScratchDirectory
    private let name: String
    private let extra: [String]
    private var process: SpawnedProcess?

    /// A server on `port` (a free one when nil); `extra` adds flags (a cluster's); `maxFileStore` limits its
    /// JetStream file storage (`max_file_store`, e.g. `2GB`, as an operator's configuration file does).
    init(
        in directory: ScratchDirectory, name: String = "n1", port: UInt16? = nil, routePort: UInt16? = nil,
        extra: [String] = [], maxFileStore: String? = nil, storeBase: String? = nil
    ) throws {
        store = "\(storeBase ?? directory.path)/nats-\(name)"
        self.port = try port ?? LoopbackPorts.unused(1)[0]
        self.routePort = routePort
        url = "nats://127.0.0.1:\(self.port)"
        self.directory = directory
        self.name = name
        if let maxFileStore {
            let path = directory.file("nats-\(name).conf")
            try "jetstream { max_file_store: \(maxFileStore) }\n".write(toFile: path, atomically: true, encoding: .utf8)
            self.extra = ["-c", path] + extra
        } else {
            self.extra = extra
        }
        try start()
    }

    /// Starts the server and waits until it accepts connections (and routes, for a cluster node); throws with
    /// the end of its log when it exits instead.
    func start() throws {
        let logPath = directory.file("nats-\(name).log")
        let started = try SpawnedProcess(
            [
                "/usr/sbin/nats-server", "-js", "-a", "127.0.0.1", "-p", String(port), "-sd", store, "-n", name,
            ] + extra, environment: ["PATH": "/usr/bin:/bin"], stderrPath: logPath)
        process = started
        var waiting = [port] + (routePort.map { [$0] } ?? [])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, started.isRunning {
            if let next = waiting.first, let fd = try? TCPSocket.connect(host: "127.0.0.1", port: next) {
                FileDescriptor.close(fd)
                waiting.removeFirst()
            }
            if waiting.isEmpty { return }
            usleep(20_000)
        }
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        throw ToolFailure(
            "nats-server \(name) did not listen on \(waiting.map(String.init)) "
                + "(\(started.isRunning ? "running" : "exited")): \(log.split(separator: "\n").suffix(3))")
    }

    /// Stops the server's process (`SIGSTOP`): connections stay open and nothing is answered.
    func pause() {
        guard let process else { return }
        kill(process.pid, SIGSTOP)
    }

    /// Stops the server as an operator's maintenance does (`SIGTERM`: it shuts down cleanly, its store written)
    /// and waits until it is gone.
    func terminate() {
        guard let process else { return }
        kill(process.pid, SIGTERM)
        _ = process.wait()
        self.process = nil
    }

    /// Kills the server (`kill -9`) and waits until it is gone.
    func stop() {
        guard let process else { return }
        kill(process.pid, SIGKILL)
        _ = process.wait()
        self.process = nil
    }

    deinit { stop() }
}

/// Three `nats-server` nodes clustered on loopback (JetStream, routes between them), each restartable on its
/// own ports (below the ephemeral range: `LoopbackPorts`) and store: a stream with three replicas survives one
/// node at a time.
final class NATSCluster {
    let nodes: [NATSServer]
    var urls: [String] { nodes.map(\.url) }
    /// Each node's monitoring port (`-m`: `/healthz`).
    let monitorPorts: [UInt16]

    /// `storeBase` puts the nodes' stores on another disk (e.g. a `SmallFilesystem`).
    init(in directory: ScratchDirectory, maxFileStore: String? = nil, storeBase: String? = nil) throws {
        let ports = try LoopbackPorts.unused(9)
        let clientPorts = Array(ports[..<3])
        let routePorts = Array(ports[3..<6])
        let monitorPorts = Array(ports[6...])
        self.monitorPorts = monitorPorts
        let routes = routePorts.map { "nats-route://127.0.0.1:\($0)" }.joined(separator: ",")
        nodes = try (0..<3).map { index in
            try NATSServer(
                in: directory, name: "c\(index + 1)", port: clientPorts[index], routePort: routePorts[index],
                extra: [
                    "--cluster_name", "offertrack", "--cluster", "nats://127.0.0.1:\(routePorts[index])", "--routes",
                    routes, "-m", String(monitorPorts[index]),
                ], maxFileStore: maxFileStore, storeBase: storeBase)
        }
    }

    /// Waits until node `index` says it is healthy (`/healthz`: JetStream current with its meta leader, streams
    /// and consumers), as an operator's rolling restart does before it stops the next node. Nil once it does, else
    /// (after `seconds`) its last answer.
    func waitUntilCurrent(_ index: Int, seconds: Double = 30) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        var last = ""
        while Date() < deadline {
            let answer = (try? Curl.run(["http://127.0.0.1:\(monitorPorts[index])/healthz"]))?.output ?? ""
            if answer.contains(#""status":"ok""#) { return nil }
            last = answer
            Thread.sleep(forTimeInterval: 0.1)
        }
        return last
    }
}

extension NATSServer {
    /// Waits until the server holds the stream `name`; false after 20 s.
    func waitForStream(_ name: String = "OFFERTRACK") throws -> Bool {
        let client = try JetStreamClient(servers: [url], name: "test-probe")
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if (try? client.streamInfo(name)) != nil { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }
}
