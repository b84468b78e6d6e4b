import Foundation

/// Figures about a running process, read from `/proc/PID`.
struct ProcessStatus {
    let pid: Int32

    /// A `kB` field of `/proc/PID/status` (`VmHWM`, `VmRSS`) in KiB; nil when the process is gone.
    func kibibytes(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("\(field):") {
            return Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }

    /// The peak resident set size in MiB (`VmHWM`).
    var peakResidentMiB: Double? { kibibytes("VmHWM").map { Double($0) / 1024 } }

    /// The current resident set size in MiB (`VmRSS`).
    var residentMiB: Double? { kibibytes("VmRSS").map { Double($0) / 1024 } }

    /// User plus system CPU time used so far, in seconds (fields 14 and 15 of `/proc/PID/stat`).
    var cpuSeconds: Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// How many descriptors the process has open.
    var openDescriptors: Int? { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count }
}
