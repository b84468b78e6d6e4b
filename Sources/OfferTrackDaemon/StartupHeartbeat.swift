import Dispatch
import Posix
import Synchronization
import Systemd

/// While the daemon starts (the journal's `quick_check` and migration take about a minute on 10M records, before
/// `READY=1`), says what it is doing in `STATUS=` and asks systemd for more time (`EXTEND_TIMEOUT_USEC`) every
/// `intervalSeconds`, but only while the process makes progress (`StartupProgress`): a start stuck on a hung disk stops
/// asking, says so, and the unit's start timeout ends it as it should. Without a service manager it does nothing.
final class StartupHeartbeat: Sendable {
    /// How often the heartbeat looks and speaks.
    static let intervalSeconds = 2.0
    /// How much time each extension asks for, from when it is sent: several intervals, so a start whose work
    /// pauses briefly is not cut short.
    static let extensionMicroseconds: UInt64 = 30_000_000

    private let phase: StartupPhase
    private let stopped = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let supervised: Bool

    /// Runs the heartbeat when `supervised` (a service manager listens: `DaemonEnvironment.supervised`).
    init(supervised: Bool, phase: StartupPhase, log: Logger) {
        self.supervised = supervised
        self.phase = phase
        guard supervised else { return }
        let started = Clock.monotonicMilliseconds()
        DispatchQueue(label: "offertrack.startup-heartbeat").async { [self] in
            var progress = StartupProgress(last: ProcessActivity.now())
            while stopped.wait(timeout: .now() + Self.intervalSeconds) == .timedOut {
                let seconds = (Clock.monotonicMilliseconds() - started) / 1000
                let doing = phase.current
                if progress.advance(to: ProcessActivity.now()) {
                    ServiceManager.notify(
                        "EXTEND_TIMEOUT_USEC=\(Self.extensionMicroseconds)\nSTATUS=starting: \(doing), \(seconds) s")
                } else {
                    ServiceManager.notify("STATUS=starting: \(doing), \(seconds) s; no progress (disk stuck?)")
                    if progress.justStalled {
                        log.warning(
                            "the start made no progress for \(Int(Self.intervalSeconds)) s while "
                                + "\(doing) (a stuck disk?); no longer asking systemd for more time")
                    }
                }
            }
            finished.signal()
        }
    }

    /// What the start does now, for `STATUS=` (said at once when supervised).
    func enter(_ doing: String) {
        phase.enter(doing)
        guard supervised else { return }
        ServiceManager.notify("STATUS=starting: \(doing)")
    }

    /// Stops the heartbeat and waits for its thread (before `READY=1`, so no `STATUS=starting` follows it).
    func stop() {
        guard supervised else { return }
        stopped.signal()
        finished.wait()
    }
}

/// Whether a starting process made progress between two looks: it read or wrote more than its own looking does
/// (reading `/proc/self/io` counts too), or used a noticeable share of a CPU. A thread blocked on a hung disk
/// does neither.
struct StartupProgress {
    /// More I/O than the heartbeat's own reads of `/proc/self/io` (a few hundred bytes a look).
    static let ioBytes: UInt64 = 64 << 10
    /// More CPU than the heartbeat's own looking (microseconds a look).
    static let cpuNanoseconds: UInt64 = 50_000_000

    private var last: ProcessActivity
    /// The previous look found progress (so a stall is said once, when it starts).
    private var wasProgressing = true
    /// The last `advance` found the first look without progress after some with it.
    private(set) var justStalled = false

    init(last: ProcessActivity) { self.last = last }

    /// Takes a new look; true when the process made progress since the last.
    mutating func advance(to now: ProcessActivity) -> Bool {
        let read = now.ioBytes &- last.ioBytes
        let computed = now.cpuNanoseconds &- last.cpuNanoseconds
        let progressed = read > Self.ioBytes || computed > Self.cpuNanoseconds
        justStalled = wasProgressing && !progressed
        wasProgressing = progressed
        last = now
        return progressed
    }
}

/// What the start does now: for `STATUS=` (`StartupHeartbeat`) and for the log line of a stop during it
/// (`StartupStop`).
final class StartupPhase: Sendable {
    private let doing = Mutex("starting")

    func enter(_ doing: String) { self.doing.withLock { $0 = doing } }

    var current: String { doing.withLock { $0 } }
}
