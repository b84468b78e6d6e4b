import Journal
import OfferTrackDomain
import Posix
import Synchronization
import Systemd

/// The daemon: one event loop thread doing all socket I/O, framing and validation, and one writer thread
/// committing batches to the journal (see `CommitPipeline`).
public final class Daemon {
    private enum Token {
        static let listener: UInt64 = 1
        static let signals: UInt64 = 2
        static let commits: UInt64 = 3
        static let firstConnection: UInt64 = 16
    }

    /// Most records in one transaction.
    static let maxBatch = 8192
    /// A connection stops being read while this many of its lines are unanswered…
    static let maxUnansweredPerConnection = 4096
    /// …or this many answer bytes wait for it to read them.
    static let maxOutputPerConnection = 1 << 20
    /// Every connection stops being read while this many bytes of records wait for the writer…
    static let maxQueuedBytes = 48 << 20
    /// …counting each record's line and what holding it costs besides (the parsed record, the job, the slot),
    /// measured at about 400 bytes.
    static func queuedCost(of line: [UInt8]) -> Int { line.count + 400 }
    static let readChunk = 65536
    static let readsPerWakeup = 4
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
    /// Refused peers: answered and shut down for writing; their input is discarded until they close (or a
    /// second passes), because closing with unread input would reset the connection before they read why.
    private var lingering: [UInt64: (fd: Int32, deadline: Int64)] = [:]
    private var nextToken = Token.firstConnection
    private var waiting: [CommitJob] = []
    private var queuedBytes = 0
    private var writerBusySince: Int64?
    /// When the writer began recomputing the derived tables for reloaded windows; nil when it is not.
    private var recomputeStartedAt: Int64?
    private var pausedForQueue: Set<UInt64> = []
    private var readBuffer: UnsafeMutableRawBufferPointer

    private var counters = DaemonCounters()
    private var storageFailure: String?
    /// Set when SQLite found the journal damaged: from then on nothing is committed or acknowledged (every record
    /// is answered `storage_unavailable`) until an operator restores a backup and restarts the daemon.
    private var journalCorruption: String?
    private var stopping = false
    private var drainDeadline: Int64 = 0
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
            ownUID: ProcessInfo.uid, allowedUIDs: configuration.allowedUIDs, allowedGIDs: configuration.allowedGIDs)
        do {
            rules = try RulesHolder(path: configuration.rulesPath)
        } catch {
            throw StartupError(exitCode: 78, "rules: \(error)")
        }
        // Before the journal is touched: a second daemon started by mistake must leave it alone.
        do {
            journalLock = try FileLock.acquireExclusive(path: configuration.databasePath + ".lock")
        } catch {
            if case .held = error {
                throw StartupError(
                    exitCode: 69, "another offertrackd is using the journal \(configuration.databasePath): \(error)")
            }
            throw StartupError(exitCode: 73, "cannot lock the journal \(configuration.databasePath): \(error)")
        }
        let activated = ServiceManager.listenDescriptors()
        if activated.count > 1 {
            throw StartupError(exitCode: 78, "socket activation passed \(activated.count) sockets; expected one")
        }
        if let fd = activated.first {
            guard ServiceManager.isListeningUnixStreamSocket(fd) else {
                throw StartupError(exitCode: 78, "the activated socket (fd \(fd)) is not a listening AF_UNIX stream")
            }
            do { try FileDescriptor.setNonBlocking(fd) } catch { throw StartupError(exitCode: 71, "\(error)") }
            listener = fd
            listenerDescription = "activated socket"
        } else {
            do {
                listener = try UnixSocket.listen(path: configuration.socketPath, mode: 0o660)
            } catch {
                if case .inUse = error { throw StartupError(exitCode: 69, "\(error)") }
                throw StartupError(exitCode: 73, "cannot listen: \(error)")
            }
            listenerDescription = configuration.socketPath
        }
        do {
            let writer = try Self.openJournal(configuration, settings: rules.current.rules.settings)
            counters.lastSeq = try writer.lastSeq()
            epoll = try Epoll()
            signals = try SignalChannel()
            pipeline = try CommitPipeline(writer: writer)
            pipeline.startLearningUsers()
        } catch {
            if activated.isEmpty, let listener {
                FileDescriptor.close(listener)
                UnixSocket.removeSocketFile(configuration.socketPath)
            }
            if let error = error as? StartupError { throw error }
            throw StartupError(exitCode: 71, "\(error)")
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
                    exitCode: 65, "the journal \(path) is corrupt (quick_check: \(problems)): \(restore)")
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
                throw StartupError(exitCode: 65, "the journal \(path) is corrupt (\(details)): \(restore)")
            }
            throw StartupError(exitCode: 73, "cannot open the journal \(path): \(error)")
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
    public func run() -> Int32 {
        do {
            try epoll.add(signals.fd, events: .readable, token: Token.signals)
            try epoll.add(pipeline.wakeup.fd, events: .readable, token: Token.commits)
            watchListener(true)
        } catch {
            log("cannot start the event loop: \(error)")
            return 71
        }
        ServiceManager.notify("READY=1\nSTATUS=\(statusLine())")
        log(
            "listening on \(listenerDescription), journal \(configuration.databasePath) "
                + "(durability \(configuration.durability.rawValue)), \(rules.summary)")
        while true {
            let events: [(token: UInt64, events: Epoll.Events)]
            do {
                events = try epoll.wait(timeoutMilliseconds: stopping ? 50 : 250)
            } catch {
                log("event loop failed: \(error)")
                return 71
            }
            let now = Clock.monotonicMilliseconds()
            for event in events {
                switch event.token {
                case Token.listener: acceptConnections(now: now)
                case Token.signals: handleSignals(now: now)
                case Token.commits: handleCommitResults(now: now)
                default: serviceConnection(event.token, events: event.events, now: now)
                }
            }
            dispatchBatchIfIdle(now: now)
            pipeline.backlog.store(waiting.count, ordering: .relaxed)
            housekeeping(now: now)
            if stopping && drainFinished(now: now) { break }
        }
        for connection in Array(connections.values) { close(connection) }
        for token in Array(lingering.keys) { closeRefused(token) }
        pipeline.runOnWriter { $0.close() }
        log("stopped: \(counters.accepted) accepted, \(counters.duplicates) duplicate since start")
        return 0
    }

    // MARK: Connections

    private func acceptConnections(now: Int64) {
        guard let listener else { return }
        while connections.count < configuration.maxConnections {
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
                token: nextToken, fd: fd, maxLineBytes: configuration.maxLineBytes, now: now)
            nextToken += 1
            connections[connection.token] = connection
            updateInterest(connection)
        }
        if connections.count >= configuration.maxConnections { watchListener(false) }
    }

    /// After a failed `accept` (typically `EMFILE`: out of descriptors) the listener stays readable, so retrying
    /// at once would spin: stop watching it until a connection closes or the pause ends, and log rarely.
    private func pauseAccepting(after error: PosixError, now: Int64) {
        watchListener(false)
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
        let token = nextToken
        nextToken += 1
        do {
            try epoll.add(fd, events: .readable, token: token)
            lingering[token] = (fd, now + 1000)
        } catch {
            FileDescriptor.close(fd)
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

    private func watchListener(_ watch: Bool) {
        guard let listener, watch != listenerWatched else { return }
        if watch {
            try? epoll.add(listener, events: .readable, token: Token.listener)
        } else {
            epoll.remove(listener)
        }
        listenerWatched = watch
    }

    private func serviceConnection(_ token: UInt64, events: Epoll.Events, now: Int64) {
        if lingering[token] != nil {
            drainRefused(token)
            return
        }
        guard let connection = connections[token] else { return }
        if events.contains(.readable) && !connection.readingPaused && !connection.inputEnded {
            read(from: connection, now: now)
        }
        if !events.isDisjoint(with: [.hangup, .error]) {
            // The peer is gone in both directions: its answers cannot be delivered.
            close(connection)
            return
        }
        settle(connection, now: now)
    }

    /// Flushes, then closes a finished or broken connection, else updates what epoll watches.
    private func settle(_ connection: ClientConnection, now: Int64) {
        guard connections[connection.token] != nil else { return }
        guard connection.flush(now: now) else {
            close(connection)
            return
        }
        if connection.inputEnded && connection.isQuiescent {
            close(connection)
            return
        }
        updateInterest(connection)
    }

    private func read(from connection: ClientConnection, now: Int64) {
        for _ in 0..<Self.readsPerWakeup {
            let result: IOResult
            do {
                result = try FileDescriptor.read(connection.fd, into: readBuffer)
            } catch {
                connection.inputEnded = true
                return
            }
            switch result {
            case .wouldBlock:
                return
            case .transferred(0):
                connection.inputEnded = true
                connection.framer.finish { handle($0, on: connection) }
                return
            case .transferred(let count):
                connection.lastProgressMilliseconds = now
                connection.framer.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<count])) {
                    handle($0, on: connection)
                }
                if mustPauseReading(connection) { return }
            }
        }
    }

    private func handle(_ event: LineFramer.Event, on connection: ClientConnection) {
        switch event {
        case .tooLong:
            counters.rejected += 1
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
                waiting.append(
                    CommitJob(
                        connection: connection.token, slot: slot, submission: Submission(record: record, line: bytes)))
                queuedBytes += Self.queuedCost(of: bytes)
            case .rejected(let id, let error):
                counters.rejected += 1
                connection.answerImmediately(.rejected(id: id, error))
            }
        }
    }

    private func mustPauseReading(_ connection: ClientConnection) -> Bool {
        if queuedBytes >= Self.maxQueuedBytes {
            pausedForQueue.insert(connection.token)
            return true
        }
        return connection.unansweredCount >= Self.maxUnansweredPerConnection
            || connection.pendingOutputBytes >= Self.maxOutputPerConnection
    }

    private func updateInterest(_ connection: ClientConnection) {
        connection.readingPaused = stopping || mustPauseReading(connection)
        var wanted: Epoll.Events = []
        if !connection.readingPaused && !connection.inputEnded { wanted.insert(.readable) }
        if connection.pendingOutputBytes > 0 { wanted.insert(.writable) }
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
        pausedForQueue.remove(connection.token)
        if !stopping && connections.count < configuration.maxConnections {
            acceptPausedUntil = nil
            watchListener(true)
        }
    }

    // MARK: Journal

    private func dispatchBatchIfIdle(now: Int64) {
        guard writerBusySince == nil, !waiting.isEmpty else { return }
        if journalCorruption != nil {
            // Not retried as if transient: refused without touching the journal again.
            refuseWaiting(now: now)
            return
        }
        let batch: [CommitJob]
        if waiting.count <= Self.maxBatch {
            batch = waiting
            waiting.removeAll(keepingCapacity: true)
        } else {
            batch = Array(waiting.prefix(Self.maxBatch))
            waiting.removeFirst(Self.maxBatch)
        }
        writerBusySince = now
        pipeline.submit(batch)
    }

    private func handleCommitResults(now: Int64) {
        let results = pipeline.takeResults()
        for outcome in pipeline.takeRecomputes() { finishRecompute(outcome, now: now) }
        for result in results {
            writerBusySince = nil
            switch result.outcomes {
            case .success(let outcomes):
                if let failure = storageFailure {
                    log("the journal commits again (after: \(failure))")
                    storageFailure = nil
                }
                for (job, outcome) in zip(result.jobs, outcomes) {
                    deliver(response(for: job, outcome), to: job)
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
                for job in result.jobs { refuse(job) }
                ServiceManager.notify("STATUS=\(statusLine())")
            case .failure(let failure):
                if storageFailure == nil { log("the journal cannot commit: \(failure.message)") }
                storageFailure = failure.message
                counters.storageUnavailable += result.jobs.count
                for job in result.jobs {
                    deliver(
                        .rejected(
                            id: job.submission.record.id,
                            RecordError(
                                .storageUnavailable, "the journal cannot commit now; retry with the same id")),
                        to: job)
                }
            }
            for job in result.jobs { queuedBytes -= Self.queuedCost(of: job.submission.line) }
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
        let refused = waiting
        waiting.removeAll()
        counters.storageUnavailable += refused.count
        for job in refused {
            refuse(job)
            queuedBytes -= Self.queuedCost(of: job.submission.line)
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
            return .accepted(id: id, seq: seq)
        case .duplicate(let seq):
            counters.duplicates += 1
            return .duplicate(id: id, seq: seq)
        case .conflict:
            counters.rejected += 1
            return .rejected(
                id: id, RecordError(.idConflict, "a record with id \(id) is journaled already with other content"))
        }
    }

    private func deliver(_ response: ResponseLine, to job: CommitJob) {
        connections[job.connection]?.answer(slot: job.slot, with: response)
    }

    private func resumeQueuePausedConnections(now: Int64) {
        guard queuedBytes < Self.maxQueuedBytes / 2, !pausedForQueue.isEmpty else { return }
        let tokens = pausedForQueue
        pausedForQueue.removeAll()
        for token in tokens {
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
        ServiceManager.notify("STOPPING=1\nSTATUS=stopping: finishing \(waiting.count) queued records")
        log("stopping: finishing what was read, answering the rest shutting_down")
        if let listener {
            watchListener(false)
            // A socket-activated listener stays with systemd; closing our copy only stops our accepting.
            FileDescriptor.close(listener)
            self.listener = nil
        }
        drainDeadline = now + Int64(configuration.drainTimeoutSeconds) * 1000
        for connection in Array(connections.values) { settle(connection, now: now) }
    }

    private func drainFinished(now: Int64) -> Bool {
        if now >= drainDeadline && !waiting.isEmpty {
            let abandoned = waiting
            waiting.removeAll()
            for job in abandoned {
                queuedBytes -= Self.queuedCost(of: job.submission.line)
                deliver(
                    .rejected(
                        id: job.submission.record.id,
                        RecordError(.shuttingDown, "the daemon is stopping; retry with the same id")),
                    to: job)
            }
            for connection in Array(connections.values) { settle(connection, now: now) }
        }
        let journalIdle = waiting.isEmpty && writerBusySince == nil && recomputeStartedAt == nil
        let outputFlushed = connections.values.allSatisfy { $0.pendingOutputBytes == 0 }
        // Past the deadline (plus a grace period for unread answers) the remaining output is abandoned.
        return journalIdle && (outputFlushed || now >= drainDeadline + 2000)
    }

    private func reloadRules(now: Int64) {
        ServiceManager.notify("RELOADING=1\nMONOTONIC_USEC=\(Clock.monotonicMicroseconds())")
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
        ServiceManager.notify("READY=1\nSTATUS=\(statusLine())")
        lastStatus = statusLine()
    }

    /// The writer finished recomputing the derived tables for a reload: the reload is complete.
    private func finishRecompute(_ outcome: Result<Void, JournalFailure>, now: Int64) {
        let took = recomputeStartedAt.map { now - $0 } ?? 0
        recomputeStartedAt = nil
        // A batch queued behind the recompute has waited for it, not for a stuck disk.
        if writerBusySince != nil { writerBusySince = now }
        switch outcome {
        case .success: log("derived tables recomputed for the new windows in \(took) ms")
        case .failure(let failure):
            log("recomputing derived tables failed (they are rebuilt at the next start): \(failure.message)")
        }
        ServiceManager.notify("READY=1\nSTATUS=\(statusLine())")
        lastStatus = statusLine()
    }

    private func housekeeping(now: Int64) {
        if let until = acceptPausedUntil, now >= until {
            acceptPausedUntil = nil
            if !stopping && connections.count < configuration.maxConnections { watchListener(true) }
        }
        if let interval = watchdogIntervalMilliseconds, now - lastWatchdogPing >= interval / 2 {
            // A recompute for new windows keeps the writer busy by design: not a stuck disk.
            let writerStuck = recomputeStartedAt == nil && (writerBusySince.map { now - $0 > interval / 2 } ?? false)
            if !writerStuck {
                ServiceManager.notify("WATCHDOG=1")
                lastWatchdogPing = now
            }
        }
        if now - lastStatusAt >= 1000 {
            lastStatusAt = now
            let status = statusLine()
            if status != lastStatus {
                ServiceManager.notify("STATUS=\(status)")
                lastStatus = status
            }
        }
        if now - lastIdleSweep >= 1000 {
            lastIdleSweep = now
            for (token, entry) in lingering where entry.deadline <= now { closeRefused(token) }
            let limit = Int64(configuration.idleTimeoutSeconds) * 1000
            for connection in Array(connections.values) where now - connection.lastProgressMilliseconds > limit {
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
