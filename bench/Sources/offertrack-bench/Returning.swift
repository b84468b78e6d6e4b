import Foundation
import Posix

/// Section 6: the returning-user workload (users come back, so the join reads their earlier records), against
/// what the same records cost plain SQLite in C and the peer a user would build (PostgreSQL, one commit a
/// record), all measured in this run.
enum Returning {
    /// Runs `binary arguments` and returns its stdout's last line's number (records or rows per second).
    static func rate(_ binary: String, _ arguments: [String]) throws -> Double {
        let numbers = try lastLineNumbers(binary, arguments)
        guard numbers.count == 1 else { throw BenchFailure("\(binary) printed \(numbers), not one rate") }
        return numbers[0]
    }

    /// Like `rate`, and the CPU (user + system) the run took: its rusage, as `getrusage(RUSAGE_CHILDREN)` counts it
    /// around the run (no other child of this process ends meanwhile: the baselines run one at a time, before the
    /// daemon of their round starts).
    static func rateAndCPU(_ binary: String, _ arguments: [String]) throws -> (rate: Double, cpuSeconds: Double) {
        let before = childrenCPUSeconds()
        let measured = try rate(binary, arguments)
        return (measured, childrenCPUSeconds() - before)
    }

    /// User + system CPU of this process's children that ended and were waited for.
    private static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
        let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        return user + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// `sqlite-baseline` with a paced rate: every record due at `recordsPerSecond`, each transaction committing
    /// what is due (a group commit without sockets or parsing), and the latency due → committed it printed.
    /// With `checkpoints` false, SQLite's autocheckpoint is off: the floor of the commits alone. The achieved rate
    /// is the offered one: records fall due by the clock, whatever the commits take.
    static func pacedLatency(
        _ binary: String, file: String, database: String, index: String, recordsPerSecond: Double, records: Int,
        checkpoints: Bool = true
    ) throws -> LatencyResult {
        let numbers = try lastLineNumbers(
            binary,
            [file, database, "1", index, String(recordsPerSecond)] + (checkpoints ? [] : ["none"]))
        guard numbers.count == 4 else { throw BenchFailure("\(binary) printed \(numbers), not 4 percentiles") }
        return LatencyResult(
            offeredPerSecond: recordsPerSecond, achievedPerSecond: recordsPerSecond, samples: records,
            p50Milliseconds: numbers[0], p99Milliseconds: numbers[1], p999Milliseconds: numbers[2],
            maxMilliseconds: numbers[3])
    }

    /// Runs `binary arguments` and returns the numbers on the last line of its stdout.
    private static func lastLineNumbers(_ binary: String, _ arguments: [String]) throws -> [Double] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let numbers = (text.split(separator: "\n").last ?? "").split(separator: " ").compactMap { Double($0) }
        guard process.terminationStatus == 0, !numbers.isEmpty else {
            throw BenchFailure(
                "\(binary) \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(text)")
        }
        return numbers
    }

    /// Writes `bytes` to `path`.
    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}
