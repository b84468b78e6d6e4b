import Foundation
import TestSupport
import Testing

/// A daemon that must not start: what it says and how it ends.
enum StartupRefusal {
    /// The daemon must refuse to start with `code` and a message naming `mentioning`, and never crash.
    static func expect(
        _ daemon: DaemonProcess, code: Int32, mentioning: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let status = daemon.waitExit(timeout: 10)
        #expect(
            status == code, "exit \(String(describing: status)); stderr: \(daemon.stderr)",
            sourceLocation: sourceLocation)
        guard status != nil else {
            daemon.kill()  // it started instead of refusing (Process traps on reading a live one's reason)
            return
        }
        #expect(daemon.process.terminationReason == .exit, "killed by a signal", sourceLocation: sourceLocation)
        #expect(
            daemon.stderr.hasPrefix("<3>offertrackd: "), "stderr: \(daemon.stderr)", sourceLocation: sourceLocation)
        #expect(daemon.stderr.contains(mentioning), "stderr: \(daemon.stderr)", sourceLocation: sourceLocation)
        #expect(daemon.notify.waitFor(line: "READY=1", timeout: 0.1) == nil, sourceLocation: sourceLocation)
    }
}
