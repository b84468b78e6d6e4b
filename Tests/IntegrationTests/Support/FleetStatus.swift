import Foundation
import TestSupport

/// What a daemon of a fleet says of itself (`offertrack status --format json`), and what a fleet that did not
/// settle was doing.
enum FleetStatus {
    /// `offertrack status --format json` of `daemon`.
    static func json(_ daemon: DaemonProcess) throws -> String {
        try Shell.run(
            Binaries.cli, ["status", "--db", daemon.databasePath, "--socket", daemon.socketPath, "--format", "json"]
        ).output
    }

    /// Each daemon's status and the tails of its logs (all of its directory's, restarts included), and the
    /// tails of the stream nodes' logs in `directory`: what a fleet that did not settle was doing.
    static func diagnosis(_ daemons: [DaemonProcess], in directory: ScratchDirectory) -> String {
        func tail(_ path: String) -> String {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").suffix(25).joined(separator: "\n")
        }
        func logs(in path: String, prefix: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
                .filter { $0.hasPrefix(prefix) && $0.hasSuffix(".log") }.sorted().map { "\(path)/\($0)" }
        }
        var parts: [String] = []
        for daemon in daemons {
            parts.append("== \(daemon.databasePath): \((try? json(daemon)) ?? "no status")")
            let directory = (daemon.databasePath as NSString).deletingLastPathComponent
            parts += logs(in: directory, prefix: "daemon-").map { "-- \($0)\n\(tail($0))" }
        }
        parts += logs(in: directory.path, prefix: "nats-").map { "-- \($0)\n\(tail($0))" }
        // A stream server whose store's disk filled up answers nothing and logs nothing (StreamServersOutOfDiskTests).
        let free = (try? FileManager.default.attributesOfFileSystem(forPath: directory.path))?[.systemFreeSize]
        parts.append("free space under \(directory.path): \(((free as? NSNumber)?.int64Value ?? -1) >> 20) MiB")
        return parts.joined(separator: "\n")
    }
}
