import Foundation
import Posix
import TestSupport
import Testing

/// A listener the event loop cannot watch is fatal, not silent.
@Suite struct ListenerFailureTests {
    /// The listener's epoll registration fails (ENOMEM injected by strace into the event loop's third `epoll_ctl`,
    /// after the signal fd and the writer's eventfd): the daemon says so in its log and STATUS and exits non-zero,
    /// instead of running on without ever accepting. strace's trace (`-yy` names each descriptor) shows that the
    /// call that failed added the listening socket: if another registration comes third, this fails rather than
    /// passing on that one's failure.
    @Test func aFailedListenerRegistrationExitsNonZero() throws {
        let directory = ScratchDirectory()
        let socket = directory.file("offertrack.sock")
        let trace = directory.file("epoll_ctl.trace")
        let daemon = try DaemonProcess(
            in: directory, arguments: ["--socket", socket],
            launcher: [
                "/usr/bin/strace", "-f", "-qq", "-yy", "-o", trace, "-e", "trace=epoll_ctl",
                "-e", "inject=epoll_ctl:error=ENOMEM:when=3", "--",
            ])
        let status = daemon.waitExit(timeout: 20)
        #expect(status != nil && status != 0, "the daemon kept running (status \(String(describing: status)))")
        let injected = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").filter {
            $0.contains("(INJECTED)")
        }
        #expect(
            injected.count == 1 && injected.allSatisfy { $0.contains("EPOLL_CTL_ADD") && $0.contains("\"\(socket)\"") },
            "the failed registration was not the listener's: \(injected)")
        #expect(daemon.stderr.contains("epoll_ctl"), "\(daemon.stderr)")
        #expect(daemon.notify.waitFor(timeout: 1) { $0.contains("STATUS=failed") } != nil)
        #expect(daemon.notify.waitFor(line: "READY=1", timeout: 0.1) == nil, "READY=1 was sent")
    }
}
