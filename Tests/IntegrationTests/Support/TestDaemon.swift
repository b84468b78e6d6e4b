import Foundation
import TestSupport
import Testing

extension ScratchDirectory {
    /// A scratch directory under `/tmp` named after `label`.
    convenience init() { self.init("ot") }
}

extension DaemonProcess {
    /// Stops each daemon with SIGTERM, in order, and expects each to drain and exit 0.
    static func terminateCleanly(_ daemons: [DaemonProcess], sourceLocation: SourceLocation = #_sourceLocation) {
        for daemon in daemons {
            daemon.signal(Signals.terminate)
            #expect(daemon.waitExit() == 0, sourceLocation: sourceLocation)
        }
    }

    /// Starts the freshly built daemon in `directory` (socket `offertrack.sock`, journal `offertrack.db` unless
    /// `databasePath` is given). `launcher` runs it through another program (e.g. `systemd-socket-activate`).
    convenience init(
        in directory: ScratchDirectory, arguments extra: [String] = [], environment: [String: String] = [:],
        launcher: [String] = [], notify existing: NotifyListener? = nil, databasePath: String? = nil
    ) throws {
        try self.init(
            binary: Binaries.daemon, directory: directory, socketPath: directory.file("offertrack.sock"),
            databasePath: databasePath ?? directory.file("offertrack.db"),
            stderrPath: directory.file("daemon-\(UInt16.random(in: 0...UInt16.max)).log"), arguments: extra,
            environment: environment, launcher: launcher, notify: try existing ?? NotifyListener(in: directory))
    }

    /// Waits for `READY=1`; fails the test with the daemon's stderr when it does not come.
    @discardableResult
    func waitReady(timeout: TimeInterval = 20, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let ready = notify.waitFor(line: "READY=1", timeout: timeout) != nil
        #expect(ready, "offertrackd did not send READY=1; stderr: \(stderr)", sourceLocation: sourceLocation)
        return ready
    }
}
