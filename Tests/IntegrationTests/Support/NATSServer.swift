import Foundation
import Posix

/// A real `nats-server` (Debian's 2.9) with JetStream on a loopback port and a scratch store, stopped when
/// released; `stop()` and `start()` again keep its port and store (a stream outage and its end).
final class NATSServer {
    let port: UInt16
    let url: String
    private let directory: ScratchDirectory
    private let name: String
    private var process: SpawnedProcess?

    init(in directory: ScratchDirectory, name: String = "n1") throws {
        let probe = try TCPSocket.listen(host: "127.0.0.1", port: 0)
        port = try TCPSocket.port(of: probe)
        FileDescriptor.close(probe)
        url = "nats://127.0.0.1:\(port)"
        self.directory = directory
        self.name = name
        try start()
    }

    /// Starts the server and waits until it accepts connections.
    func start() throws {
        process = try SpawnedProcess(
            [
                "/usr/sbin/nats-server", "-js", "-a", "127.0.0.1", "-p", String(port), "-sd",
                directory.file("nats-\(name)"), "-n", name,
            ], environment: ["PATH": "/usr/bin:/bin"], stderrPath: directory.file("nats-\(name).log"))
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

    /// Kills the server (`kill -9`) and waits until it is gone.
    func stop() {
        guard let process else { return }
        kill(process.pid, SIGKILL)
        _ = process.wait()
        self.process = nil
    }

    deinit { stop() }
}
