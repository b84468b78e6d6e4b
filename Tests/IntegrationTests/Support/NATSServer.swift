import Foundation
import Posix
import TestSupport

/// A real `nats-server` (Debian's 2.9) with JetStream on a loopback port and a scratch store, stopped when
/// released; `stop()` and `start()` again keep its port and store (a stream outage and its end).
final class NATSServer {
    let port: UInt16
    let url: String
    private let directory: ScratchDirectory
    private let name: String
    private let extra: [String]
    private var process: SpawnedProcess?

    /// A server on `port` (a free one when nil); `extra` adds flags (a cluster's); `maxFileStore` limits its
    /// JetStream file storage (`max_file_store`, e.g. `2GB`, as an operator's configuration file does).
    init(
        in directory: ScratchDirectory, name: String = "n1", port: UInt16? = nil, extra: [String] = [],
        maxFileStore: String? = nil
    ) throws {
        if let port {
            self.port = port
        } else {
            let probe = try TCPSocket.listen(host: "127.0.0.1", port: 0)
            self.port = try TCPSocket.port(of: probe)
            FileDescriptor.close(probe)
        }
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

    /// Starts the server and waits until it accepts connections.
    func start() throws {
        process = try SpawnedProcess(
            [
                "/usr/sbin/nats-server", "-js", "-a", "127.0.0.1", "-p", String(port), "-sd",
                directory.file("nats-\(name)"), "-n", name,
            ] + extra, environment: ["PATH": "/usr/bin:/bin"], stderrPath: directory.file("nats-\(name).log"))
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let fd = try? TCPSocket.connect(host: "127.0.0.1", port: port) {
                FileDescriptor.close(fd)
                return
            }
            usleep(20_000)
        }
        throw ToolFailure("nats-server did not listen on \(port)")
    }

    /// Stops the server's process (`SIGSTOP`): connections stay open and nothing is answered.
    func pause() {
        guard let process else { return }
        kill(process.pid, SIGSTOP)
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
/// own port and store: a stream with three replicas survives one node at a time.
final class NATSCluster {
    let nodes: [NATSServer]
    var urls: [String] { nodes.map(\.url) }

    init(in directory: ScratchDirectory, maxFileStore: String? = nil) throws {
        var clientPorts: [UInt16] = []
        var routePorts: [UInt16] = []
        var probes: [Int32] = []
        for _ in 0..<6 {
            let fd = try TCPSocket.listen(host: "127.0.0.1", port: 0)
            probes.append(fd)
            (clientPorts.count < 3 ? { clientPorts.append($0) } : { routePorts.append($0) })(try TCPSocket.port(of: fd))
        }
        probes.forEach { FileDescriptor.close($0) }
        let routes = routePorts.map { "nats-route://127.0.0.1:\($0)" }.joined(separator: ",")
        nodes = try (0..<3).map { index in
            try NATSServer(
                in: directory, name: "c\(index + 1)", port: clientPorts[index],
                extra: [
                    "--cluster_name", "offertrack", "--cluster", "nats://127.0.0.1:\(routePorts[index])", "--routes",
                    routes,
                ], maxFileStore: maxFileStore)
        }
    }
}
