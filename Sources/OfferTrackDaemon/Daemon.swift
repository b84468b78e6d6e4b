import Fleet
import Journal
import Metrics
import NATS
import OfferTrackDomain
import Posix
import Synchronization
import Systemd
import WireFormat

/// The daemon: one event loop thread doing all socket I/O, framing and validation, and one writer thread
/// committing batches to the journal (see `CommitPipeline`).
public final class Daemon {
    private enum Token {
        static let listener: UInt64 = 1
        static let signals: UInt64 = 2
        static let commits: UInt64 = 3
        static let firstConnection: UInt64 = 16
    }

    /// A connection stops being read while this many of its lines are unanswered…
    static let maxUnansweredPerConnection = 4096
    /// …or this many answer bytes wait for it to read them (checked after every line)…
    static let maxOutputPerConnection = 1 << 20
    /// …or its peer has not read this many bytes already written to it (so answers written to the socket count
    /// too: a peer that never reads costs at most this, in the kernel, before it is held back)…
    static let maxUnreadByPeer = 64 << 10
    /// …or any of its answers wait while this many answer bytes wait over all connections (and, for records
    /// queued, `CommitQueue.Limits.maxQueuedBytes`).
    static let maxUnsentAnswerBytes = 16 << 20
    /// Refused peers kept open at once to read why (more are closed oldest first), and for how long.
    static let maxLingering = 64
    static let lingerMilliseconds: Int64 = 250
    /// Connections accepted per wakeup, so that a connect flood cannot starve the connections being served.
    static let acceptsPerWakeup = 256
    /// The longest one turn of the event loop counts towards idleness: a longer gap means the daemon was not
    /// running (SIGSTOP, a paused VM, a long rules recompute), and connections cannot make progress then.
    static let maxIdleStepMilliseconds: Int64 = 500
    static let readChunk = 65536
    static let readsPerWakeup = 4
    /// Lines handled per connection per wakeup, so that one turn of the event loop stays short whatever the
    /// peers send (a 64 KiB read of `x\n` is 32,768 rejections) and the other connections are served between.
    static let linesPerWakeup = 64
    /// Descriptors the daemon needs besides its connections (journal, epoll, signals, listener, stdio).
    static let spareDescriptors: UInt64 = 64
    /// After `accept` fails (out of descriptors), accepting pauses this long unless a connection closes first.
    static let acceptPauseMilliseconds: Int64 = 100
    /// At most one accept-failure log line this often.
    static let acceptLogIntervalMilliseconds: Int64 = 10_000

    private let configuration: DaemonConfiguration
    private let epoll: Epoll
    private let signals: SignalChannel
    private let pipeline: CommitPipeline
    private let policy: PeerPolicy
    private let rules: RulesHolder
    private var listener: Int32?
    private var listenerWatched = false
    private let listenerDescription: String
    /// The exclusive lock on `<journal>.lock`, held for the process's life.
    private let journalLock: Int32

    private var connections: [UInt64: ClientConnection] = [:]
    /// Refused peers: answered and shut down for writing; their input is discarded until they close (or
    /// `lingerMilliseconds` pass), because closing with unread input would reset the connection before they
    /// read why. At most `maxLingering` of them.
    private var lingering: [UInt64: (fd: Int32, deadline: Int64)] = [:]
    /// The lingering tokens, oldest first (some may have closed already).
    private var lingerOrder: [UInt64] = []
    private var nextToken = Token.firstConnection
    /// The records waiting for the writer, the batch it has, and the connections held back for them.
    private var commits = CommitQueue()
    /// When the writer began recomputing the derived tables for reloaded windows; nil when it is not.
    private var recomputeStartedAt: Int64?
    private let answers = AnswerBudget(limit: Daemon.maxUnsentAnswerBytes)
    private var pausedForAnswers: Set<UInt64> = []
    /// Milliseconds the event loop has been running (monotonic time minus the gaps it was stopped): what the
    /// idle timeout counts.
    private var activeNow: Int64 = 0
    private var lastTurnAt: Int64 = 0
    /// Why the daemon must stop and exit non-zero (the listener could not be watched).
    private var fatalFailure: String?
    private var readBuffer: UnsafeMutableRawBufferPointer
    /// Lines handled in the current `read(from:)`.
    private var linesThisWakeup = 0

    private var counters = DaemonCounters()
    private let metrics = DaemonMetrics()
    private let metricsServer: MetricsServer?
    /// Edge mode: the forwarder to the stream.
    private let forwarder: EdgeForwarder?
    /// Central mode: the consumer of this journal's partitions.
    private let consumer: CentralConsumer?
    private var storageFailure: String?
    /// Set when SQLite found the journal damaged: from then on nothing is committed or acknowledged (every record
    /// is answered `storage_unavailable`) until an operator restores a backup and restarts the daemon.
    private var journalCorruption: String?
    private var stopping = false
    private var drainDeadline: Int64 = 0
    private let notifier = ServiceNotifier()
    private let watchdogIntervalMilliseconds: Int64?
    private var lastWatchdogPing: Int64 = 0
    private var lastStatus = ""
    private var lastStatusAt: Int64 = 0
    private var lastIdleSweep: Int64 = 0
    /// When accepting resumes after an accept failure; nil while not paused.
    private var acceptPausedUntil: Int64?
    private var lastAcceptFailureLog: Int64?

    /// Opens the journal, takes the socket (socket activation or `--socket`) and gets ready to run.
    public init(configuration: DaemonConfiguration) throws(StartupError) {
        self.configuration = configuration
        policy = PeerPolicy(
            ownUID: CurrentProcess.uid, allowedUIDs: configuration.allowedUIDs, allowedGIDs: configuration.allowedGIDs)
        do {
            rules = try RulesHolder(path: configuration.rulesPath)
        } catch {
            throw StartupError(exitCode: .configuration, "rules: \(error)")
        }
        // Before the journal is touched: a second daemon started by mistake must leave it alone.
        do {
            journalLock = try FileLock.acquireExclusive(path: configuration.databasePath + ".lock")
        } catch {
            if case .held = error {
                throw StartupError(
                    exitCode: .unavailable,
                    "another offertrackd is using the journal \(configuration.databasePath): \(error)")
            }
            throw StartupError(
                exitCode: .cannotCreate, "cannot lock the journal \(configuration.databasePath): \(error)")
        }
        let activated = ServiceManager.listenDescriptors()
        if activated.count > 1 {
            throw StartupError(
                exitCode: .configuration, "socket activation passed \(activated.count) sockets; expected one")
        }
        if let fd = activated.first {
            guard ServiceManager.isListeningUnixStreamSocket(fd) else {
                throw StartupError(
                    exitCode: .configuration, "the activated socket (fd \(fd)) is not a listening AF_UNIX stream")
            }
            guard (try? UnixSocket.isAbstract(fd)) == false else {
                throw StartupError(
                    exitCode: .configuration,
                    "the activated socket (fd \(fd)) is an abstract AF_UNIX socket: it has no file mode, so any local "
                        + "process could connect; use a socket path (ListenStream=/run/offertrack/offertrack.sock)")
            }
            do { try FileDescriptor.setNonBlocking(fd) } catch { throw StartupError(exitCode: .osError, "\(error)") }
            listener = fd
            listenerDescription = "activated socket"
        } else {
            do {
                listener = try UnixSocket.listen(path: configuration.socketPath, mode: 0o660)
            } catch {
                if case .inUse = error { throw StartupError(exitCode: .unavailable, "\(error)") }
                throw StartupError(exitCode: .cannotCreate, "cannot listen: \(error)")
            }
            listenerDescription = configuration.socketPath
        }
        do {
            let writer = try Self.openJournal(configuration, settings: rules.current.rules.settings)
            counters.lastSeq = try writer.lastSeq()
            if !configuration.consumeServers.isEmpty {
                do {
                    try writer.claim(
                        FleetMembership(partitions: configuration.partitions, total: configuration.partitionsTotal))
                } catch let mismatch as FleetMembership.Mismatch {
                    throw StartupError(exitCode: .configuration, "\(mismatch)")
                }
            }
            epoll = try Epoll()
            signals = try SignalChannel()
            pipeline = try CommitPipeline(writer: writer, metrics: metrics, backlog: commits.backlog)
            pipeline.startLearningUsers()
        } catch {
            if activated.isEmpty, let listener {
                FileDescriptor.close(listener)
                UnixSocket.removeSocketFile(configuration.socketPath)
            }
            if let error = error as? StartupError { throw error }
            throw StartupError(exitCode: .osError, "\(error)")
        }
        let stream = StreamConfiguration(
            name: configuration.streamName, subjects: ["offertrack.records.>"],
            replicas: Int64(configuration.streamReplicas), maxBytes: Int64(configuration.streamMaxMegabytes) << 20,
            duplicatesWindowMilliseconds: 120_000)
        if configuration.consumeServers.isEmpty {
            consumer = nil
        } else {
            do {
                consumer = try CentralConsumer(
                    servers: configuration.consumeServers, stream: stream, partitions: configuration.partitions,
                    commit: { [pipeline] submissions in
                        try pipeline.runOnWriter { try $0.append(submissions, receivedAt: Clock.wallMilliseconds()) }
                    },
                    recordLag: { [pipeline] lag in _ = try? pipeline.runOnWriter { try $0.record(lag) } },
                    log: { FileDescriptor.printError("offertrackd: \($0)") })
            } catch {
                throw StartupError(exitCode: .unavailable, "--consume: \(error)")
            }
        }
        if configuration.forwardServers.isEmpty {
            forwarder = nil
        } else {
            do {
                forwarder = try EdgeForwarder(
                    journalPath: configuration.databasePath, servers: configuration.forwardServers, stream: stream,
                    partitions: configuration.partitionsTotal)
            } catch {
                throw StartupError(exitCode: .unavailable, "--forward: \(error)")
            }
        }
        if let address = configuration.metricsAddress {
            let path = configuration.databasePath
            do {
                metricsServer = try MetricsServer(address: address) { [metrics, forwarder, consumer, pipeline] in
                    let bytes = ["", "-wal"].compactMap { CurrentProcess.fileSize(path + $0) }.reduce(0, +)
                    return metrics.render(
                        journalBytes: Int64(bytes),
                        checkpointFailures: pipeline.checkpointHealth.withLock { $0.failures },
                        forwardLag: forwarder?.progress.lagRecords,
                        consumeLag: consumer.map { Int64($0.progress.lagRecords) })
                }
            } catch {
                throw StartupError(
                    exitCode: error.isAddressInUse ? .unavailable : .osError, "--metrics-listen: \(error)")
            }
        } else {
            metricsServer = nil
        }
        watchdogIntervalMilliseconds = ServiceManager.watchdogIntervalMicroseconds().map { Int64($0 / 1000) }
        readBuffer = .allocate(byteCount: Self.readChunk, alignment: 16)
        raiseDescriptorLimit()
    }

    /// Checks the journal (`PRAGMA quick_check`), then opens and migrates it and brings its derived tables up to
    /// date. A damaged journal is exit 65, which the unit does not restart: restarting cannot repair it.
    private static func openJournal(_ configuration: DaemonConfiguration, settings: AttributionSettings)
        throws(StartupError) -> JournalWriter
    {
        let path = configuration.databasePath
        let restore = "stop offertrackd and restore the latest backup (see README \"Backups\")"
        do {
            let started = Clock.monotonicMilliseconds()
            if let problems = try JournalOpening.quickCheck(path: path) {
                throw StartupError(
                    exitCode: .dataError, "the journal \(path) is corrupt (quick_check: \(problems)): \(restore)")
            }
            FileDescriptor.printError(
                "offertrackd: quick_check of \(path): ok in \(Clock.monotonicMilliseconds() - started) ms")
            let writer = try JournalWriter(
                path: path, durability: configuration.durability, schema: .migrate, settings: settings,
                maintainsDerivedTables: !configuration.journalOnly, checkpointsOnCommit: false)
            if configuration.journalOnly { try writer.invalidateDerivedTables() }
            return writer
        } catch let error as StartupError {
            throw error
        } catch {
            if let details = JournalOpening.corruption(in: error) {
                throw StartupError(exitCode: .dataError, "the journal \(path) is corrupt (\(details)): \(restore)")
            }
            throw StartupError(exitCode: .cannotCreate, "cannot open the journal \(path): \(error)")
        }
    }

    /// Raises the soft open-file limit (1024 under systemd by default) to what `--max-connections` needs.
    private func raiseDescriptorLimit() {
        let wanted = UInt64(configuration.maxConnections) + Self.spareDescriptors
        let granted = ResourceLimits.raiseOpenFiles(to: wanted)
        if granted < wanted {
            log("the open-file limit is \(granted), below the \(wanted) that --max-connections needs")
        }
    }

    deinit { readBuffer.deallocate() }

    /// Runs until SIGTERM/SIGINT and the drain; returns the exit code.
    public func run() -> ExitCode {
        do {
            try epoll.add(signals.fd, events: .readable, token: Token.signals)
            try epoll.add(pipeline.wakeup.fd, events: .readable, token: Token.commits)
            try watchListener(true)
        } catch {
            log("cannot start the event loop: \(error)")
            notifier.send("STATUS=failed: cannot start the event loop: \(error)".replacingNewlines())
            return .osError
        }
        metricsServer?.start()
        forwarder?.start()
        consumer?.start()
        lastTurnAt = Clock.monotonicMilliseconds()
        notifier.send("READY=1\nSTATUS=\(statusLine())")
        log(
            "listening on \(listenerDescription), journal \(configuration.databasePath) "
                + "(durability \(configuration.durability.rawValue)), \(rules.summary)")
        while true {
            let events: [(token: UInt64, events: Epoll.Events)]
            do {
                events = try epoll.wait(timeoutMilliseconds: stopping ? 50 : 250)
            } catch {
                log("event loop failed: \(error)")
                return .osError
            }
            let now = Clock.monotonicMilliseconds()
            activeNow += min(max(now - lastTurnAt, 0), Self.maxIdleStepMilliseconds)
            lastTurnAt = now
            for event in events {
                switch event.token {
                case Token.listener: acceptConnections(now: now)
                case Token.signals: handleSignals(now: now)
                case Token.commits: handleCommitResults(now: now)
                default: serviceConnection(event.token, events: event.events, now: now)
                }
            }
            resumeAnswerPausedConnections()
            dispatchBatchIfIdle(now: now)
            metrics.connections.set(Int64(connections.count))
            metrics.queuedRecords.set(Int64(commits.queuedRecords))
            housekeeping(now: now)
            if let failure = fatalFailure, !stopping {
                log("\(failure); stopping so that the service manager restarts the daemon")
                notifier.send("STATUS=failed: \(failure)".replacingNewlines())
                beginShutdown(now: now)
            }
            if stopping && drainFinished(now: now) { break }
        }
        for connection in Array(connections.values) { close(connection) }
        for token in Array(lingering.keys) { closeRefused(token) }
        forwarder?.stop()
        consumer?.stop()
        pipeline.runOnWriter { $0.close() }
        log("stopped: \(counters.accepted) accepted, \(counters.duplicates) duplicate since start")
        return fatalFailure == nil ? .ok : .osError
    }

    // MARK: Connections

    private func acceptConnections(now: Int64) {
        guard let listener else { return }
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
            guard let peer = try? UnixSocket.peerCredentials(fd), policy.allows(peer) else {
                refuseUnauthorized(fd, now: now)
                continue
            }
            let connection = ClientConnection(
                token: nextToken, fd: fd, maxLineBytes: configuration.maxLineBytes, budget: answers, now: activeNow)
            nextToken += 1
            connections[connection.token] = connection
            updateInterest(connection)
        }
        if connections.count >= configuration.maxConnections { try? watchListener(false) }
    }

    /// After a failed `accept` (typically `EMFILE`: out of descriptors) the listener stays readable, so retrying
    /// at once would spin: stop watching it until a connection closes or the pause ends, and log rarely.
    private func pauseAccepting(after error: PosixError, now: Int64) {
        // Refused peers only linger to read why: their descriptors are the first to give back.
        for token in Array(lingering.keys) { closeRefused(token) }
        try? watchListener(false)
        acceptPausedUntil = now + Self.acceptPauseMilliseconds
        if lastAcceptFailureLog.map({ now - $0 >= Self.acceptLogIntervalMilliseconds }) ?? true {
            lastAcceptFailureLog = now
            log("accept failed: \(error); accepting paused while \(connections.count) connections are open")
        }
    }

    private func refuseUnauthorized(_ fd: Int32, now: Int64) {
        let line = ResponseLine.rejected(
            id: nil,
            RecordError(.unauthorized, "this peer's uid and gid are not allowed to send records")
        ).encoded
        _ = line.withUnsafeBytes { try? FileDescriptor.write(fd, from: $0) }
        UnixSocket.shutdownWrite(fd)
        counters.rejected += 1
        metrics.reject(.unauthorized)
        let token = nextToken
        nextToken += 1
        do {
            try epoll.add(fd, events: .readable, token: token)
        } catch {
            FileDescriptor.close(fd)
            return
        }
        lingering[token] = (fd, now + Self.lingerMilliseconds)
        lingerOrder.append(token)
        // Over the cap the oldest goes first: a flood of refused connects cannot use up the descriptors.
        while lingering.count > Self.maxLingering, !lingerOrder.isEmpty {
            closeRefused(lingerOrder.removeFirst())
        }
        if lingering.isEmpty {
            lingerOrder.removeAll()
        } else if lingerOrder.count > 4 * Self.maxLingering {
            lingerOrder.removeAll { lingering[$0] == nil }
        }
    }

    /// Discards a refused peer's input; closes once it has closed too.
    private func drainRefused(_ token: UInt64) {
        guard let entry = lingering[token] else { return }
        while true {
            switch try? FileDescriptor.read(entry.fd, into: readBuffer) {
            case .transferred(let count) where count > 0: continue
            case .wouldBlock: return
            default:
                closeRefused(token)
                return
            }
        }
    }

    private func closeRefused(_ token: UInt64) {
        guard let entry = lingering.removeValue(forKey: token) else { return }
        epoll.remove(entry.fd)
        FileDescriptor.close(entry.fd)
    }

    /// Starts or stops watching the listener. A failure to watch it is fatal: a daemon that silently stops
    /// accepting is worse than one the service manager restarts.
    private func watchListener(_ watch: Bool) throws(PosixError) {
        guard let listener, watch != listenerWatched else { return }
        if watch {
            try epoll.add(listener, events: .readable, token: Token.listener)
        } else {
            epoll.remove(listener)
        }
        listenerWatched = watch
    }

    /// Watches the listener again (after a pause or at the connection limit), recording a failure as fatal.
    private func resumeAccepting() {
        do {
            try watchListener(true)
        } catch {
            fatalFailure = fatalFailure ?? "cannot watch the listening socket: \(error)"
        }
    }

    private func serviceConnection(_ token: UInt64, events: Epoll.Events, now: Int64) {
        if lingering[token] != nil {
            drainRefused(token)
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
    private func settle(_ connection: ClientConnection, now: Int64) {
        guard connections[connection.token] != nil else { return }
        guard connection.flush(now: activeNow) else {
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
    /// handled are consumed, so reading can stop after any line (its answers or its queued records reached a
    /// bound) and the rest stays in the socket, which pushes back on the peer.
    private func read(from connection: ClientConnection, now: Int64) {
        linesThisWakeup = 0
        if UnixSocket.unreadOutputBytes(connection.fd) >= Self.maxUnreadByPeer {
            connection.peerIsBehind = true
            return
        }
        for _ in 0..<Self.readsPerWakeup {
            let result: IOResult
            do {
                result = try UnixSocket.peek(connection.fd, into: readBuffer)
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
                connection.lastProgressMilliseconds = activeNow
                let consumed = connection.framer.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<count])) {
                    handle($0, on: connection)
                }
                guard consume(consumed, from: connection) else {
                    connection.inputEnded = true
                    return
                }
                if consumed < count || linesThisWakeup >= Self.linesPerWakeup || mustPauseReading(connection) {
                    return
                }
            }
        }
    }

    /// Takes `count` peeked bytes out of the socket; false when it fails (the peer is gone).
    private func consume(_ count: Int, from connection: ClientConnection) -> Bool {
        var left = count
        while left > 0 {
            let result = try? FileDescriptor.read(
                connection.fd, into: UnsafeMutableRawBufferPointer(rebasing: readBuffer[0..<left]))
            guard case .transferred(let taken)? = result, taken > 0 else { return false }
            left -= taken
        }
        return true
    }

    /// Answers or queues one framed line; false when reading `connection` must stop after it.
    private func handle(_ event: LineFramer.Event, on connection: ClientConnection) -> Bool {
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
            switch bytes.withUnsafeBytes(RecordValidator.validate) {
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
        linesThisWakeup += 1
        return linesThisWakeup < Self.linesPerWakeup && !mustPauseReading(connection)
    }

    /// Whether `connection` must not be read now. Over the global queue or answer budget only the connections
    /// with records queued or answers waiting are held back, so a well-behaved client is still read.
    private func mustPauseReading(_ connection: ClientConnection) -> Bool {
        if commits.mustHoldBack(connection.token) { return true }
        if answers.isExceeded && connection.heldAnswerBytes > 0 {
            pausedForAnswers.insert(connection.token)
            return true
        }
        return connection.peerIsBehind || connection.unansweredCount >= Self.maxUnansweredPerConnection
            || connection.heldAnswerBytes >= Self.maxOutputPerConnection
    }

    private func updateInterest(_ connection: ClientConnection) {
        connection.readingPaused = stopping || mustPauseReading(connection)
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

    private func close(_ connection: ClientConnection) {
        guard connections.removeValue(forKey: connection.token) != nil else { return }
        epoll.remove(connection.fd)
        FileDescriptor.close(connection.fd)
        commits.forget(connection.token)
        pausedForAnswers.remove(connection.token)
        if !stopping && connections.count < configuration.maxConnections {
            acceptPausedUntil = nil
            resumeAccepting()
        }
    }

    // MARK: Journal

    private func dispatchBatchIfIdle(now: Int64) {
        guard commits.writerBusySince == nil, !commits.isEmpty else { return }
        if journalCorruption != nil {
            // Not retried as if transient: refused without touching the journal again.
            refuseWaiting(now: now)
            return
        }
        guard let batch = commits.takeBatch(now: now) else { return }
        pipeline.submit(batch)
    }

    private func handleCommitResults(now: Int64) {
        let results = pipeline.takeResults()
        for outcome in pipeline.takeRecomputes() { finishRecompute(outcome, now: now) }
        for result in results {
            commits.batchFinished()
            switch result.outcomes {
            case .success(let outcomes):
                if let failure = storageFailure {
                    log("the journal commits again (after: \(failure))")
                    storageFailure = nil
                }
                let answeredAt = Clock.monotonicMicroseconds()
                for (job, outcome) in zip(result.jobs, outcomes) {
                    deliver(response(for: job, outcome), to: job)
                    metrics.ackLatency.observe(answeredAt &- job.readAtMicroseconds)
                }
            case .failure(let failure) where failure.isCorruption:
                if journalCorruption == nil {
                    counters.corruptionsDetected += 1
                    log(
                        "JOURNAL CORRUPT: \(failure.message); nothing more is acknowledged. Stop offertrackd, "
                            + "restore the latest backup (README \"Backups\") and start it again")
                }
                journalCorruption = failure.message
                counters.storageUnavailable += result.jobs.count
                metrics.journalCorrupt.set(1)
                metrics.storageFailures.increment()
                metrics.reject(.storageUnavailable, count: UInt64(result.jobs.count))
                for job in result.jobs { refuse(job) }
                notifier.send("STATUS=\(statusLine())")
            case .failure(let failure):
                if storageFailure == nil { log("the journal cannot commit: \(failure.message)") }
                storageFailure = failure.message
                counters.storageUnavailable += result.jobs.count
                metrics.storageFailures.increment()
                metrics.reject(.storageUnavailable, count: UInt64(result.jobs.count))
                for job in result.jobs { refuse(job) }
            }
            for job in result.jobs { release(job) }
            for token in Set(result.jobs.map(\.connection)) {
                if let connection = connections[token] { settle(connection, now: now) }
            }
        }
        resumeQueuePausedConnections(now: now)
        dispatchBatchIfIdle(now: now)
    }

    /// Answers `storage_unavailable` to one job that was not committed.
    private func refuse(_ job: CommitJob) {
        deliver(
            .rejected(
                id: job.submission.record.id,
                RecordError(.storageUnavailable, "the journal cannot commit now; retry with the same id")),
            to: job)
    }

    /// Refuses every waiting record (the journal is corrupt) and settles their connections.
    private func refuseWaiting(now: Int64) {
        let refused = commits.removeAll()
        counters.storageUnavailable += refused.count
        metrics.reject(.storageUnavailable, count: UInt64(refused.count))
        for job in refused {
            refuse(job)
            release(job)
        }
        for token in Set(refused.map(\.connection)) {
            if let connection = connections[token] { settle(connection, now: now) }
        }
        resumeQueuePausedConnections(now: now)
    }

    private func response(for job: CommitJob, _ outcome: AppendOutcome) -> ResponseLine {
        let id = job.submission.record.id
        switch outcome {
        case .accepted(let seq):
            counters.accepted += 1
            counters.lastSeq = max(counters.lastSeq, seq)
            metrics.accepted.increment()
            metrics.lastSeq.set(counters.lastSeq)
            return .accepted(id: id, seq: seq)
        case .duplicate(let seq):
            counters.duplicates += 1
            metrics.duplicates.increment()
            return .duplicate(id: id, seq: seq)
        case .conflict:
            counters.rejected += 1
            metrics.reject(.idConflict)
            return .rejected(
                id: id, RecordError(.idConflict, "a record with id \(id) is journaled already with other content"))
        }
    }

    private func deliver(_ response: ResponseLine, to job: CommitJob) {
        connections[job.connection]?.answer(slot: job.slot, with: response)
    }

    /// A job left the queue: its bytes no longer count against the queue budget.
    private func release(_ job: CommitJob) {
        commits.release(job)
    }

    /// Reads again the connections held back by the answer budget once it is half free.
    private func resumeAnswerPausedConnections() {
        guard !pausedForAnswers.isEmpty, answers.bytes < answers.limit / 2 else { return }
        let tokens = pausedForAnswers
        pausedForAnswers.removeAll()
        for token in tokens {
            if let connection = connections[token] { updateInterest(connection) }
        }
    }

    private func resumeQueuePausedConnections(now: Int64) {
        for token in commits.takeResumable() {
            if let connection = connections[token] { updateInterest(connection) }
        }
    }

    // MARK: Signals, shutdown, housekeeping

    private func handleSignals(now: Int64) {
        for signal in signals.receive() {
            switch signal {
            case .terminate, .interrupt: beginShutdown(now: now)
            case .hangup: reloadRules(now: now)
            case .other: break
            }
        }
    }

    private func beginShutdown(now: Int64) {
        guard !stopping else { return }
        stopping = true
        notifier.send("STOPPING=1\nSTATUS=stopping: finishing \(commits.count) queued records")
        log("stopping: finishing what was read, answering the rest shutting_down")
        if let listener {
            try? watchListener(false)
            // A socket-activated listener stays with systemd; closing our copy only stops our accepting.
            FileDescriptor.close(listener)
            self.listener = nil
        }
        drainDeadline = now + Int64(configuration.drainTimeoutSeconds) * 1000
        for connection in Array(connections.values) { settle(connection, now: now) }
    }

    private func drainFinished(now: Int64) -> Bool {
        if now >= drainDeadline && !commits.isEmpty {
            let abandoned = commits.removeAll()
            metrics.reject(.shuttingDown, count: UInt64(abandoned.count))
            for job in abandoned {
                release(job)
                deliver(
                    .rejected(
                        id: job.submission.record.id,
                        RecordError(.shuttingDown, "the daemon is stopping; retry with the same id")),
                    to: job)
            }
            for connection in Array(connections.values) { settle(connection, now: now) }
        }
        let journalIdle = commits.isEmpty && commits.writerBusySince == nil && recomputeStartedAt == nil
        let outputFlushed = connections.values.allSatisfy { $0.pendingOutputBytes == 0 }
        // Past the deadline (plus a grace period for unread answers) the remaining output is abandoned.
        return journalIdle && (outputFlushed || now >= drainDeadline + 2000)
    }

    private func reloadRules(now: Int64) {
        notifier.send("RELOADING=1\nMONOTONIC_USEC=\(Clock.monotonicMicroseconds())")
        let previousSettings = rules.current.rules.settings
        switch rules.reload() {
        case .success(let summary):
            log("rules reloaded: \(summary)")
            let settings = rules.current.rules.settings
            if settings != previousSettings && !configuration.journalOnly {
                // New windows change attribution itself: the derived tables are recomputed on the writer thread
                // while this loop keeps serving (and feeding the watchdog); READY=1 follows when it is done.
                // Records read meanwhile are committed after it, under the new windows.
                recomputeStartedAt = now
                log("recomputing the derived tables for the new windows; the daemon keeps serving")
                pipeline.recomputeDerivedTables(settings)
                return
            }
        case .failure(let error):
            log("rules reload failed, keeping the previous rules: \(error)")
        }
        notifier.send("READY=1\nSTATUS=\(statusLine())")
        lastStatus = statusLine()
    }

    /// The writer finished recomputing the derived tables for a reload: the reload is complete.
    private func finishRecompute(_ outcome: Result<Void, JournalFailure>, now: Int64) {
        let took = recomputeStartedAt.map { now - $0 } ?? 0
        recomputeStartedAt = nil
        // A batch queued behind the recompute has waited for it, not for a stuck disk.
        commits.writerResumed(at: now)
        switch outcome {
        case .success: log("derived tables recomputed for the new windows in \(took) ms")
        case .failure(let failure):
            log("recomputing derived tables failed (they are rebuilt at the next start): \(failure.message)")
        }
        notifier.send("READY=1\nSTATUS=\(statusLine())")
        lastStatus = statusLine()
    }

    private func housekeeping(now: Int64) {
        if let until = acceptPausedUntil, now >= until {
            acceptPausedUntil = nil
            if !stopping && connections.count < configuration.maxConnections { resumeAccepting() }
        }
        if let interval = watchdogIntervalMilliseconds, now - lastWatchdogPing >= interval / 2 {
            // A recompute for new windows keeps the writer busy by design: not a stuck disk.
            let writerStuck =
                recomputeStartedAt == nil && (commits.writerBusySince.map { now - $0 > interval / 2 } ?? false)
            if !writerStuck {
                notifier.send("WATCHDOG=1")
                lastWatchdogPing = now
            }
        }
        if now - lastStatusAt >= 1000 {
            lastStatusAt = now
            let status = statusLine()
            if status != lastStatus {
                notifier.send("STATUS=\(status)")
                lastStatus = status
            }
        }
        if !lingering.isEmpty {
            for (token, entry) in lingering where entry.deadline <= now { closeRefused(token) }
            if lingering.isEmpty { lingerOrder.removeAll() }
        }
        if now - lastIdleSweep >= 1000 {
            lastIdleSweep = now
            let limit = Int64(configuration.idleTimeoutSeconds) * 1000
            for connection in Array(connections.values) where activeNow - connection.lastProgressMilliseconds > limit {
                close(connection)
            }
        }
    }

    private func statusLine() -> String {
        var line =
            "\(stopping ? "stopping" : "serving"): \(connections.count) connections; "
            + "\(counters.accepted) accepted, \(counters.duplicates) duplicate, \(counters.rejected) rejected "
            + "since start; last seq \(counters.lastSeq)"
        if let journalCorruption {
            line += "; JOURNAL CORRUPT (\(counters.corruptionsDetected) detected; not acknowledging; restore from "
            line += "backup): \(journalCorruption)"
        } else if let storageFailure {
            line += "; JOURNAL FAILING: \(storageFailure)"
        }
        let checkpoints = pipeline.checkpointHealth.withLock { $0 }
        if let failing = checkpoints.failing {
            line += "; CHECKPOINT FAILING (\(checkpoints.failures) failures since start, backing off): \(failing)"
        } else if checkpoints.failures > 0 {
            line += "; \(checkpoints.failures) checkpoint failures since start"
        }
        if let progress = consumer?.progress {
            line +=
                "; consumed \(progress.accepted) (\(progress.duplicates) duplicate, \(progress.conflicts) conflicting), "
                + "lag \(progress.lagRecords) records"
        }
        if let progress = forwarder?.progress {
            line += "; forwarded through seq \(progress.acknowledgedThrough), lag \(progress.lagRecords) records"
        }
        if let error = rules.lastError { line += "; RULES RELOAD FAILED (old rules kept): \(error)" }
        if recomputeStartedAt != nil { line += "; recomputing the derived tables for new windows" }
        return line.replacingNewlines()
    }

    private func log(_ message: String) {
        FileDescriptor.printError("offertrackd: \(message)")
    }
}

extension String {
    /// The string on one line (newlines would split a `STATUS=` notification).
    fileprivate func replacingNewlines() -> String {
        String(map { $0.isNewline ? " " : $0 })
    }
}
