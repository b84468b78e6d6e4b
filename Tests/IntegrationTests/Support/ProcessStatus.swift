import Foundation
import Synchronization
import TestSupport

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
    var cpuSeconds: Double? { ProcessCPU.seconds(pid: pid) }

    /// The CPU seconds the process uses in the next `seconds`, and the baseline for it measured in the same
    /// seconds: the CPU time a thread of this process spinning meanwhile gets. A process spinning on a failing call
    /// gets about as much as the spinner however busy the machine is; an idle one next to nothing.
    func cpuBesideASpinner(seconds: Double) -> (used: Double, spinner: Double) {
        let spinning = Atomic<Bool>(true)
        let spinner = Mutex(0.0)
        let finished = DispatchSemaphore(value: 0)
        let before = cpuSeconds ?? 0
        Thread {
            var time = timespec()
            while spinning.load(ordering: .relaxed) {}
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            spinner.withLock { $0 = Double(time.tv_sec) + Double(time.tv_nsec) / 1e9 }
            finished.signal()
        }.start()
        Thread.sleep(forTimeInterval: seconds)
        let used = (cpuSeconds ?? .infinity) - before
        spinning.store(false, ordering: .relaxed)
        finished.wait()
        return (used, spinner.withLock { $0 })
    }

    /// How many descriptors the process has open.
    var openDescriptors: Int? { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count }
}
