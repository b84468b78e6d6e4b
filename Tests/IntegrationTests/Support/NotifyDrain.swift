import Foundation
import Synchronization

/// Reads and discards the daemon's notifications on a thread, as systemd does: a notify socket nobody reads fills
/// its queue (`net.unix.max_dgram_qlen`, 10 here) and then `sd_notify` blocks the daemon's event loop.
final class NotifyDrain: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let done = Atomic<Bool>(false)

    init(fd: Int32) {
        Thread { [self] in
            defer { done.store(true, ordering: .sequentiallyConsistent) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !stopping.load(ordering: .sequentiallyConsistent) {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 50) > 0 else { continue }
                _ = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            }
        }.start()
    }

    /// Stops draining and waits for the thread.
    func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        while !done.load(ordering: .sequentiallyConsistent) { usleep(1000) }
    }
}
