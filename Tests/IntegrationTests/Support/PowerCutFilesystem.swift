import Foundation
import Posix
import TestSupport

/// `Tests/Tools/powercut-fs` mounted on a scratch directory: a FUSE filesystem that keeps what was written
/// in memory and, on a power cut, keeps only what was synced (`fsync`/`fdatasync`).
final class PowerCutFilesystem {
    let path: String
    private let process = Process()
    private let output = Pipe()

    init(in directory: ScratchDirectory) throws {
        path = directory.file("powercut")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        process.executableURL = URL(fileURLWithPath: Repository.file("Tests/Tools/powercut-fs"))
        process.arguments = [path]
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while !Self.isMounted(path) {
            guard Date() < deadline, process.isRunning else {
                throw PowerCutFailure("powercut-fs did not mount \(path) (is /dev/fuse there?)")
            }
            usleep(20_000)
        }
    }

    static func isMounted(_ path: String) -> Bool {
        let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
        return mounts.split(separator: "\n").contains { $0.split(separator: " ").dropFirst().first == Substring(path) }
    }

    private var cuts = 0
    private var pending: [UInt8] = []

    /// Cuts the power: from now on writes and syncs hang, and never reach what survives. Returns once the
    /// filesystem says so.
    func cut() throws {
        cuts += 1
        Signals.send(SIGUSR1, to: process.processIdentifier)
        try awaitLine("cut \(cuts)")
    }

    /// The power is back: every file holds what it held at its last sync. Returns once it does.
    func restore() throws {
        Signals.send(SIGUSR2, to: process.processIdentifier)
        try awaitLine("restored \(cuts)")
    }

    /// Reads the filesystem's stdout up to the line `expected`.
    private func awaitLine(_ expected: String) throws {
        let handle = output.fileHandleForReading
        while true {
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                if line == expected { return }
            }
            let data = handle.availableData
            guard !data.isEmpty else { throw PowerCutFailure("powercut-fs ended before \"\(expected)\"") }
            pending.append(contentsOf: data)
        }
    }

    deinit {
        Signals.send(SIGTERM, to: process.processIdentifier)
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            Signals.send(Signals.kill, to: process.processIdentifier)
            _ = try? Shell.run("/usr/bin/fusermount3", ["-u", "-z", path])
        }
    }
}

struct PowerCutFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
