import Foundation
import Synchronization

/// The baseline for bounds on when a daemon's timers fire: how late this machine wakes a thread of the test that
/// sleeps one idle turn of the daemon's event loop (250 ms) again and again, over the same seconds.
final class WakeupLateness: Sendable {
    private let running = Atomic<Bool>(true)
    private let worst = Mutex(0.0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts measuring.
    init() {
        Thread { [self] in
            while running.load(ordering: .relaxed) {
                let before = Date()
                Thread.sleep(forTimeInterval: 0.25)
                let late = Date().timeIntervalSince(before) - 0.25
                worst.withLock { $0 = max($0, late) }
            }
            finished.signal()
        }.start()
    }

    /// Stops measuring; the latest wake-up seen, in seconds.
    func stop() -> Double {
        running.store(false, ordering: .relaxed)
        finished.wait()
        return worst.withLock { $0 }
    }
}
