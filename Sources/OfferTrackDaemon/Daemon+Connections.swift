import JournalStore
import OfferTrackDomain
import Posix
import WireFormat

/// Connection I/O and framing: reading (peeked, consumed line by line), handing lines to the validator, what
/// epoll watches, flushing and closing.
extension Daemon {
    func serviceConnection(_ token: UInt64, events: Epoll.Events, now: Int64) {
        if connections.refused.contains(token) {
            connections.refused.drain(token)
            return
        }
        guard let connection = connections[token] else { return }
        if !events.isDisjoint(with: [.hangup, .error]) {
            // The peer is gone in both directions: its answers cannot be delivered, and handling what it left
            // unread (up to a socket buffer of lines) would only delay the peers still there.
            close(connection)
            return
        }
        if events.contains(.writable) && connection.peerIsBehind {
            // Writable: the peer has read enough of what waited in the socket.
            connection.peerIsBehind = UnixSocket.unreadOutputBytes(connection.fd) >= Self.maxUnreadByPeer
        }
        if events.contains(.readable) && !connection.readingPaused && !connection.inputEnded {
            read(from: connection, now: now)
        }
        settle(connection, now: now)
    }

    /// Flushes, then closes a finished or broken connection, else updates what epoll watches.
    func settle(_ connection: ClientConnection, now: Int64) {
        guard connections[connection.token] != nil else { return }
        guard connection.flush(now: connections.activeNow) else {
            close(connection)
            return
        }
        if connection.inputEnded && connection.isQuiescent {
            close(connection)
            return
        }
        updateInterest(connection)
    }

    /// Reads what `connection` sent, line by line: the bytes are peeked first and only those of the lines
    /// handled are consumed (`ReadBuffer.discard`), so reading can stop after any line (its answers or its queued records reached a
    /// bound) and the rest stays in the socket, which pushes back on the peer.
    func read(from connection: ClientConnection, now: Int64) {
        connections.linesThisWakeup = 0
        if UnixSocket.unreadOutputBytes(connection.fd) >= Self.maxUnreadByPeer {
            connection.peerIsBehind = true
            return
        }
        for _ in 0..<Self.readsPerWakeup {
            let result: IOResult
            do {
                result = try connections.readBuffer.peek(connection.fd)
            } catch {
                connection.inputEnded = true
                return
            }
            switch result {
            case .wouldBlock:
                return
            case .transferred(0):
                connection.inputEnded = true
                connection.framer.finish { _ = handle($0, on: connection) }
                return
            case .transferred(let count):
                connection.lastProgressMilliseconds = connections.activeNow
                let consumed = connection.framer.append(connections.readBuffer.bytes(count)) {
                    handle($0, on: connection)
                }
                guard connections.readBuffer.discard(consumed, from: connection.fd) else {
                    connection.inputEnded = true
                    return
                }
                if consumed < count || connections.linesThisWakeup >= Self.linesPerWakeup
                    || mustPauseReading(connection)
                {
                    return
                }
            }
        }
    }

    /// Answers or queues one framed line; false when reading `connection` must stop after it.
    func handle(_ event: LineFramer.Event, on connection: ClientConnection) -> Bool {
        switch event {
        case .tooLong:
            counters.rejected += 1
            metrics.reject(.lineTooLong)
            connection.answerImmediately(
                .rejected(
                    id: nil,
                    RecordError(
                        .lineTooLong,
                        "the line is longer than \(configuration.maxLineBytes) bytes; it was discarded")))
        case .line(let bytes):
            switch RecordValidator.validate(bytes, sharedUsers: rules.current.rules.settings.sharedUsers) {
            case .valid(let record) where (record.type == .review || record.type == .erasure) && !connection.mayReview:
                // After every check of the line itself, before the journal (SPEC 2's order).
                counters.rejected += 1
                metrics.reject(.unauthorized)
                connection.answerImmediately(
                    .rejected(
                        id: record.id,
                        RecordError(
                            .unauthorized,
                            "this peer's uid and gid are not allowed to send \(record.type.rawValue)s (reviews and "
                                + "erasures need --allow-review-uid or --allow-review-gid)")))
            case .valid(let record):
                let slot = connection.reserveSlot()
                commits.append(
                    CommitJob(
                        connection: connection.token, slot: slot, submission: Submission(record: record, line: bytes),
                        readAtMicroseconds: Clock.monotonicMicroseconds()))
            case .rejected(let id, let error):
                counters.rejected += 1
                metrics.reject(error.code)
                connection.answerImmediately(.rejected(id: id, error))
            }
        }
        connections.linesThisWakeup += 1
        return connections.linesThisWakeup < Self.linesPerWakeup && !mustPauseReading(connection)
    }

    /// Whether `connection` must not be read now. Over the global queue or answer budget only the connections
    /// with records queued or answers waiting are held back, so a well-behaved client is still read.
    func mustPauseReading(_ connection: ClientConnection) -> Bool {
        if commits.mustHoldBack(connection.token) { return true }
        if connections.answers.isExceeded && connection.heldAnswerBytes > 0 {
            connections.pausedForAnswers.insert(connection.token)
            return true
        }
        return connection.peerIsBehind || connection.unansweredCount >= Self.maxUnansweredPerConnection
            || connection.heldAnswerBytes >= Self.maxOutputPerConnection
    }

    func updateInterest(_ connection: ClientConnection) {
        connection.readingPaused = service.stopping || mustPauseReading(connection)
        var wanted: Epoll.Events = []
        if !connection.readingPaused && !connection.inputEnded { wanted.insert(.readable) }
        if connection.pendingOutputBytes > 0 || connection.peerIsBehind { wanted.insert(.writable) }
        guard wanted != connection.watchedEvents || connection.watchedEvents.isEmpty else { return }
        do {
            if connection.watchedEvents.isEmpty && !connection.registered {
                try epoll.add(connection.fd, events: wanted, token: connection.token)
                connection.registered = true
            } else {
                try epoll.modify(connection.fd, events: wanted, token: connection.token)
            }
            connection.watchedEvents = wanted
        } catch {
            close(connection)
        }
    }

    func close(_ connection: ClientConnection) {
        guard connections.remove(connection.token) else { return }
        epoll.remove(connection.fd)
        FileDescriptor.close(connection.fd)
        commits.forget(connection.token)
        if !service.stopping && connections.count < configuration.maxConnections {
            connections.acceptPausedUntil = nil
            resumeAccepting()
        }
    }
}
