import Foundation

/// A thread running one closure; `join()` waits for it to finish (and makes its writes visible).
final class Worker: Sendable {
    private let finished = DispatchSemaphore(value: 0)

    /// Starts `body` on a new thread at once.
    init(name: String, _ body: @escaping @Sendable () -> Void) {
        let finished = self.finished
        let thread = Thread {
            body()
            finished.signal()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Waits for the closure to return.
    func join() { finished.wait() }
}
