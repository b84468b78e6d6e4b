import Foundation
import Posix

/// Section 6: the returning-user workload (users come back, so the join reads their earlier records), against
/// what the same records cost plain SQLite in C and the peer a user would build (PostgreSQL, one commit a
/// record), all measured in this run.
enum Returning {
    /// Runs `binary arguments` and returns its stdout's first number (records or rows per second).
    static func rate(_ binary: String, _ arguments: [String]) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0, let value = Double(text.split(separator: "\n").last ?? "") else {
            throw BenchFailure(
                "\(binary) \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(text)")
        }
        return value
    }

    /// Writes `bytes` to `path`.
    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}
