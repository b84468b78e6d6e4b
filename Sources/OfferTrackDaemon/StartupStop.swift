import Dispatch
import Posix
import Synchronization

/// SIGTERM or SIGINT while the daemon starts (before its event loop reads signals): the start stops and the
/// process exits 0, as any stop does. The journal's `quick_check` and a migration take a minute on 10M records,
/// and systemd's stop must not wait for them nor see a process killed by the signal. Nothing is lost: before
/// `READY=1` no record was acknowledged, and the journal is only read, or written in transactions that an exit
/// leaves whole or undone (as after a crash). A SIGHUP meanwhile is kept for the event loop (sent again when the
/// watch ends).
final class StartupStop: Sendable {
    private let stopped = Mutex(false)
    private let finished = DispatchSemaphore(value: 0)
    private let hangup = Mutex(false)

    /// Watches `signals` on a thread of its own until `end()`. On SIGTERM or SIGINT: `cleanUp`, a log line naming
    /// what the start was doing (`doing`), exit 0.
    init(
        signals: SignalChannel, log: Logger, doing: @escaping @Sendable () -> String,
        cleanUp: @escaping @Sendable () -> Void
    ) {
        let channel = UncheckedChannel(signals)
        DispatchQueue(label: "offertrack.startup-stop").async { [self] in
            defer { finished.signal() }
            while !stopped.withLock({ $0 }) {
                guard channel.value.waitReadable(timeoutMilliseconds: 100) else { continue }
                for signal in channel.value.receive() {
                    switch signal {
                    case .terminate, .interrupt:
                        cleanUp()
                        log.notice("stopped during the start, while \(doing()); nothing was acknowledged yet")
                        CurrentProcess.exitImmediately(0)
                    case .hangup:
                        hangup.withLock { $0 = true }
                    case .other:
                        break
                    }
                }
            }
        }
    }

    /// Ends the watch (the event loop reads the signals from now on); a SIGHUP it took is sent again.
    func end() {
        stopped.withLock { $0 = true }
        finished.wait()
        if hangup.withLock({ $0 }) { SignalChannel.resendHangup() }
    }

    /// The channel, used by the watch's thread alone until `end()` returns, then by the event loop alone.
    private struct UncheckedChannel: @unchecked Sendable {
        let value: SignalChannel
        init(_ value: SignalChannel) { self.value = value }
    }
}
