import AttributionJoin
import Fleet
import JournalStore
import Metrics
import NATS
import OfferTrackDomain
import Posix
import Synchronization
import Systemd
import WireFormat

/// The daemon: one event loop thread doing all socket I/O, framing and validation, and one writer thread
/// committing batches to the journal (see `CommitPipeline`). Its state is held by job: the peers
/// (`Connections`), the records waiting for the writer (`CommitQueue`), the journal's health (`JournalHealth`),
/// what the service manager is told (`ServiceStatus`), the rules and their recompute (`RulesHolder`,
/// `WindowRecompute`) and the edge or central side (`DaemonFleet`).
public final class Daemon {
    /// What each registration in the event loop's epoll set carries in its data: the fixed sources, then
    /// connections numbered from `firstConnection`.
    enum EpollToken {
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

    let configuration: DaemonConfiguration
    /// Every line the daemon logs, with its priority.
    let log: Logger
    let epoll: Epoll
    let signals: SignalChannel
    let pipeline: CommitPipeline
    let rules: RulesHolder
    /// The exclusive lock on `<journal>.lock`, held for the process's life.
    let journalLock: Int32
    /// The listener and the peers.
    let connections: Connections
    /// The records waiting for the writer, the batch it has, and the connections held back for them.
    var commits = CommitQueue()
    /// The journal as the last commit found it.
    var journal = JournalHealth.healthy
    /// The recompute a reload with new windows started.
    var recompute = WindowRecompute()
    /// What the service manager is told, and whether the daemon is stopping.
    let service: ServiceStatus
    var counters = DaemonCounters()
    let metrics = DaemonMetrics()
    let metricsServer: MetricsServer?
    /// The forwarder (edge) or the consumer (central), or neither.
    let fleet: DaemonFleet

    /// Opens the journal, takes the socket (socket activation or `--socket`) and gets ready to run; every line
    /// the daemon logs goes to `log`. `environment` is what the executable read from its process environment.
    public init(configuration: DaemonConfiguration, environment: DaemonEnvironment, log: Logger) throws(StartupError) {
        self.configuration = configuration
        self.log = log
        service = ServiceStatus(
            log: log,
            watchdogIntervalMilliseconds: ServiceManager.watchdogIntervalMicroseconds().map { Int64($0 / 1000) })
        let policy = PeerPolicy(
            ownUID: CurrentProcess.uid, allowedUIDs: configuration.allowedUIDs, allowedGIDs: configuration.allowedGIDs,
            reviewerUIDs: configuration.reviewerUIDs, reviewerGIDs: configuration.reviewerGIDs)
        do {
            rules = try RulesHolder(path: configuration.rulesPath, journalPath: configuration.databasePath)
            metrics.retentionDays.set(rules.current.rules.retentionDays ?? 0)
        } catch {
            throw StartupError(exitCode: .configuration, "rules: \(error)")
        }
        // Signals are read from here on: a stop during the start ends it (exit 0) instead of killing the process.
        do {
            signals = try SignalChannel()
        } catch {
            throw StartupError(exitCode: .osError, "\(error)")
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
        let socket = try ListeningSocket.take(configuration)
        let phase = StartupPhase()
        let socketPath = configuration.socketPath
        let stopDuringStart = StartupStop(signals: signals, log: log, doing: { phase.current }) { [socket] in
            socket.abandon(path: socketPath)
        }
        defer { stopDuringStart.end() }
        do {
            let writer = try Self.openJournal(
                configuration, settings: rules.current.rules.settings, environment: environment, phase: phase,
                log: log)
            counters.lastSeq = try writer.lastSeq()
            try DaemonFleet.claim(writer, configuration)
            epoll = try Epoll()
            connections = Connections(
                listener: socket.fd, description: socket.description, policy: policy, epoll: epoll)
            pipeline = try CommitPipeline(
                writer: writer, metrics: metrics, backlog: commits.backlog, log: log,
                walLimitFrames: environment.walLimitFrames,
                erasureOriginals: configuration.forwardServers.isEmpty ? nil : ErasureOriginals())
            pipeline.setSharedUsers(rules.current.rules.settings.sharedUsers)
            pipeline.learning.start()
        } catch {
            socket.abandon(path: configuration.socketPath)
            if let error = error as? StartupError { throw error }
            throw StartupError(exitCode: .osError, "\(error)")
        }
        phase.enter("connecting to the stream")
        fleet = try DaemonFleet(configuration, pipeline: pipeline, log: log)
        if let address = configuration.metricsAddress {
            let path = configuration.databasePath
            do {
                metricsServer = try MetricsServer(address: address, log: log) { [metrics, fleet, pipeline] in
                    let bytes = ["", "-wal"].compactMap { CurrentProcess.fileSize(path + $0) }.reduce(0, +)
                    let sealed = (try? ReadOnlyJournal(path: path, schema: .anyVersion).sealState())?.map {
                        (lastSealedDay: $0.lastSealedDay, horizon: $0.horizon)
                    }
                    return metrics.render(
                        journalBytes: Int64(bytes),
                        checkpoints: pipeline.checkpoints.health.withLock { $0 }, fleet: fleet.metrics,
                        sealed: sealed)
                }
            } catch {
                throw StartupError(
                    exitCode: error.isAddressInUse ? .unavailable : .osError, "--metrics-listen: \(error)")
            }
        } else {
            metricsServer = nil
        }
        raiseDescriptorLimit()
    }

    /// Runs until SIGTERM/SIGINT and the drain; returns the exit code.
    public func run() -> ExitCode {
        guard startEventLoop() else { return .osError }
        while true {
            let events: [(token: UInt64, events: Epoll.Events)]
            do {
                events = try epoll.wait(timeoutMilliseconds: service.stopping ? 50 : 250)
            } catch {
                log.error("event loop failed: \(error)")
                return .osError
            }
            let now = Clock.monotonicMilliseconds()
            connections.advanceClock(to: now)
            for event in events {
                switch event.token {
                case EpollToken.listener: acceptConnections(now: now)
                case EpollToken.signals: handleSignals(now: now)
                case EpollToken.commits: handleCommitResults(now: now)
                default: serviceConnection(event.token, events: event.events, now: now)
                }
            }
            finishTurn(now: now)
            if service.stopping && drainFinished(now: now) { break }
        }
        shutDown()
        return service.fatalFailure == nil ? .ok : .osError
    }

    /// Watches the signals, the writer's wakeup and the listener, starts the side threads and sends `READY=1`;
    /// false when the event loop cannot start.
    private func startEventLoop() -> Bool {
        do {
            try epoll.add(signals.fd, events: .readable, token: EpollToken.signals)
            try epoll.add(pipeline.wakeup.fd, events: .readable, token: EpollToken.commits)
            try watchListener(true)
        } catch {
            log.error("cannot start the event loop: \(error)")
            service.send("STATUS=failed: cannot start the event loop: \(error)".replacingNewlines())
            return false
        }
        metricsServer?.start()
        fleet.start()
        connections.startClock(now: Clock.monotonicMilliseconds())
        service.send("READY=1\nSTATUS=\(statusLine())")
        log.info(
            "listening on \(connections.listenerDescription), journal \(configuration.databasePath) "
                + "(durability \(configuration.durability.rawValue)), \(rules.summary)")
        return true
    }

    /// After the events: readers resumed, the next batch handed over, metrics, housekeeping, and the drain begun
    /// after a fatal failure.
    private func finishTurn(now: Int64) {
        resumeAnswerPausedConnections()
        dispatchBatchIfIdle(now: now)
        metrics.connections.set(Int64(connections.count))
        metrics.queuedRecords.set(Int64(commits.queuedRecords))
        housekeeping(now: now)
        if let failure = service.fatalFailure, !service.stopping {
            log.error("\(failure); stopping so that the service manager restarts the daemon")
            service.send("STATUS=failed: \(failure)".replacingNewlines())
            beginShutdown(now: now)
        }
    }

    /// After the drain: every connection closed, the side threads stopped, the journal closed.
    private func shutDown() {
        for connection in connections.all { close(connection) }
        connections.refused.closeAll()
        fleet.stop()
        pipeline.closeJournal()
        log.info("stopped: \(counters.accepted) accepted, \(counters.duplicates) duplicate since start")
    }
}
