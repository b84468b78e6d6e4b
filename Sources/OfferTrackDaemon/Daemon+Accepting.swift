import OfferTrackDomain
import Posix
import WireFormat

/// Accepting peers: the listener watched or not (paused after a failed `accept`, or at the connection limit), the
/// peer policy, refused peers handed to `RefusedPeers`.
extension Daemon {
    func acceptConnections(now: Int64) {
        guard let listener = connections.listener else { return }
        var accepts = 0
        while connections.count < configuration.maxConnections && accepts < Self.acceptsPerWakeup {
            accepts += 1
            let accepted: Int32?
            do {
                accepted = try UnixSocket.accept(listener)
            } catch {
                pauseAccepting(after: error, now: now)
                return
            }
            guard let fd = accepted else { return }
            guard let peer = try? UnixSocket.peerCredentials(fd), connections.policy.allows(peer) else {
                refuseUnauthorized(fd, now: now)
                continue
            }
            let connection = ClientConnection(
                token: connections.takeToken(), fd: fd, maxLineBytes: configuration.maxLineBytes,
                budget: connections.answers, now: connections.activeNow, mayReview: connections.policy.mayReview(peer))
            connections.insert(connection)
            updateInterest(connection)
        }
        if connections.count >= configuration.maxConnections { try? watchListener(false) }
    }

    /// After a failed `accept` (typically `EMFILE`: out of descriptors) the listener stays readable, so retrying
    /// at once would spin: stop watching it until a connection closes or the pause ends, and log rarely
    /// (`AcceptPause`).
    func pauseAccepting(after error: PosixError, now: Int64) {
        // Refused peers only linger to read why: their descriptors are the first to give back.
        connections.refused.closeAll()
        try? watchListener(false)
        connections.acceptPausedUntil = connections.acceptPause.failed(now: now) {
            log.warning("accept failed: \(error); accepting paused while \(connections.count) connections are open")
        }
    }

    /// Answers a peer the policy refuses with one `unauthorized` line and lets it linger to read it (`RefusedPeers`).
    func refuseUnauthorized(_ fd: Int32, now: Int64) {
        let line = ResponseLine.rejected(
            id: nil,
            RecordError(.unauthorized, "this peer's uid and gid are not allowed to send records")
        ).encoded
        counters.rejected += 1
        metrics.reject(.unauthorized)
        connections.refused.refuse(fd, answer: line, token: connections.takeToken(), now: now)
    }

    /// Starts or stops watching the listener. A failure to watch it is fatal: a daemon that silently stops
    /// accepting is worse than one the service manager restarts.
    func watchListener(_ watch: Bool) throws(PosixError) {
        guard let listener = connections.listener, watch != connections.listenerWatched else { return }
        if watch {
            try epoll.add(listener, events: .readable, token: EpollToken.listener)
        } else {
            epoll.remove(listener)
        }
        connections.listenerWatched = watch
    }

    /// Watches the listener again (after a pause or at the connection limit), recording a failure as fatal.
    func resumeAccepting() {
        do {
            try watchListener(true)
        } catch {
            service.fatalFailure = service.fatalFailure ?? "cannot watch the listening socket: \(error)"
        }
    }
}
