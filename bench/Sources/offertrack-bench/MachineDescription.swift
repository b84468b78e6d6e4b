import Foundation
import Glibc

/// What the numbers were measured on.
struct MachineDescription {
    let processors: Int
    let cpuModel: String
    let kernel: String
    let date: String

    static func current() -> MachineDescription {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
        var names = utsname()
        uname(&names)
        let release = withUnsafeBytes(of: &names.release) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return MachineDescription(
            processors: sysconf(Int32(_SC_NPROCESSORS_ONLN)), cpuModel: model, kernel: release,
            date: formatter.string(from: Date()))
    }
}
