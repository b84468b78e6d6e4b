import Foundation

/// Resident memory of a process, from `/proc/PID/status`.
struct ProcessMemory {
    /// Peak resident set size (`VmHWM`), KiB.
    let peakKiB: Int
    /// Current resident set size (`VmRSS`), KiB.
    let currentKiB: Int

    var peakMiB: Double { Double(peakKiB) / 1024 }
    var currentMiB: Double { Double(currentKiB) / 1024 }

    static func read(pid: Int32) throws -> ProcessMemory {
        let path = "/proc/\(pid)/status"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw BenchFailure("cannot read \(path)")
        }
        func kib(_ key: String) -> Int? {
            for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
                return line.dropFirst(key.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap {
                    Int($0)
                }
            }
            return nil
        }
        guard let peak = kib("VmHWM"), let current = kib("VmRSS") else {
            throw BenchFailure("\(path) has no VmHWM/VmRSS")
        }
        return ProcessMemory(peakKiB: peak, currentKiB: current)
    }
}
