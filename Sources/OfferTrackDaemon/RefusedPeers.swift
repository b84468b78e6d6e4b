import Posix

/// Refused peers: answered and shut down for writing; their input is discarded until they close (or
/// `lingerMilliseconds` pass), because closing with unread input would reset the connection before they read
/// why. At most `maxLingering` of them: over it the oldest goes first, so a flood of refused connects cannot use
/// up the descriptors.
final class RefusedPeers {
    /// Refused peers kept open at once to read why (more are closed oldest first), and for how long.
    static let maxLingering = 64
    static let lingerMilliseconds: Int64 = 250

    private let epoll: Epoll
    /// Where their input is read to be dropped (the event loop's buffer).
    private let buffer: ReadBuffer
    private var lingering: [UInt64: (fd: Int32, deadline: Int64)] = [:]
    /// The lingering tokens, oldest first (some may have closed already).
    private var order: [UInt64] = []

    init(epoll: Epoll, buffer: ReadBuffer) {
        self.epoll = epoll
        self.buffer = buffer
    }

    /// Whether `token` is a lingering refused peer's.
    func contains(_ token: UInt64) -> Bool { lingering[token] != nil }

    /// Writes `line` to `fd`, shuts down its sending side and keeps it, watched under `token`, until the peer
    /// closes or `lingerMilliseconds` pass.
    func refuse(_ fd: Int32, answer line: [UInt8], token: UInt64, now: Int64) {
        _ = try? FileDescriptor.write(fd, line[...])
        UnixSocket.shutdownWrite(fd)
        do {
            try epoll.add(fd, events: .readable, token: token)
        } catch {
            FileDescriptor.close(fd)
            return
        }
        lingering[token] = (fd, now + Self.lingerMilliseconds)
        order.append(token)
        while lingering.count > Self.maxLingering, !order.isEmpty {
            close(order.removeFirst())
        }
        if lingering.isEmpty {
            order.removeAll()
        } else if order.count > 4 * Self.maxLingering {
            order.removeAll { lingering[$0] == nil }
        }
    }

    /// Discards a refused peer's input, at most `Daemon.readsPerWakeup` reads a wakeup like a connection's (what
    /// is left keeps it readable for the next turn), so a refused peer streaming without pause cannot hold the
    /// event loop; closes once the peer has closed too.
    func drain(_ token: UInt64) {
        guard let entry = lingering[token] else { return }
        for _ in 0..<Daemon.readsPerWakeup {
            switch try? buffer.read(entry.fd) {
            case .transferred(let count) where count > 0: continue
            case .wouldBlock: return
            default:
                close(token)
                return
            }
        }
    }

    /// Closes the refused peers whose time to linger has passed.
    func closeExpired(now: Int64) {
        guard !lingering.isEmpty else { return }
        for (token, entry) in lingering where entry.deadline <= now { close(token) }
        if lingering.isEmpty { order.removeAll() }
    }

    /// Closes every refused peer (their descriptors are the first to give back, and at the end).
    func closeAll() {
        for token in Array(lingering.keys) { close(token) }
    }

    private func close(_ token: UInt64) {
        guard let entry = lingering.removeValue(forKey: token) else { return }
        epoll.remove(entry.fd)
        FileDescriptor.close(entry.fd)
    }
}
