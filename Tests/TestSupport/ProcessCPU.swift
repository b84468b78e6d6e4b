import Foundation

/// The CPU time a process has used, from `/proc/PID/stat`.
public enum ProcessCPU {
    /// User plus system CPU time used so far by process `pid`, in seconds (fields 14 and 15 of `/proc/PID/stat`);
    /// nil when the process is gone.
    public static func seconds(pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
