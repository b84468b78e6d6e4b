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
    let epoll: Epoll
    let signals: SignalChannel
    let pipeline: CommitPipeline
    let policy: PeerPolicy
    let rules: RulesHolder
    /// The listening socket's descriptor until the drain begins.
    var listener: Int32?
    var listenerWatched = false
    let listenerDescription: String
    /// The exclusive lock on `<journal>.lock`, held for the process's life.
    let journalLock: Int32

    var connections: [UInt64: ClientConnection] = [:]
    /// Refused peers lingering to read why.
    let refused: RefusedPeers
    var nextToken = EpollToken.firstConnection
    /// The records waiting for the writer, the batch it has, and the connections held back for them.
    var commits = CommitQueue()
    /// When the writer began recomputing the derived tables for reloaded windows; nil when it is not.
    var recomputeStartedAt: Int64?
    /// The last recompute asked for; outcomes of earlier ones (superseded by a second reload) are ignored.
    var recomputeGeneration = 0
    let answers = AnswerBudget(limit: Daemon.maxUnsentAnswerBytes)
    var pausedForAnswers: Set<UInt64> = []
    /// Milliseconds the event loop has been running (monotonic time minus the gaps it was stopped): what the
    /// idle timeout counts.
    var activeNow: Int64 = 0
    var lastTurnAt: Int64 = 0
    /// Why the daemon must stop and exit non-zero (the listener could not be watched).
    var fatalFailure: String?
    /// What connections are peeked and read into (`readChunk` bytes).
    let readBuffer = ReadBuffer(capacity: Daemon.readChunk)
    /// Lines handled in the current `read(from:)`.
    var linesThisWakeup = 0

    var counters = DaemonCounters()
    let metrics = DaemonMetrics()
    let metricsServer: MetricsServer?
    /// Edge mode: the forwarder to the stream.
    let forwarder: EdgeForwarder?
    /// Central mode: the consumer of this journal's partitions.
    let consumer: CentralConsumer?
    var storageFailure: String?
    /// Set when SQLite found the journal damaged: from then on nothing is committed or acknowledged (every record
    /// is answered `storage_unavailable`) until an operator restores a backup and restarts the daemon.
    var journalCorruption: String?
    var stopping = false
    var drainDeadline: Int64 = 0
    let notifier = ServiceNotifier()
    let watchdogIntervalMilliseconds: Int64?
    var lastWatchdogPing: Int64 = 0
    var lastStatus = ""
    var lastStatusAt: Int64 = 0
    var lastIdleSweep: Int64 = 0
    /// When accepting resumes after an accept failure; nil while not paused.
    var acceptPausedUntil: Int64?
    var acceptPause = AcceptPause()

    /// Opens the journal, takes the socket (socket activation or `--socket`) and gets ready to run.
    public init(configuration: DaemonConfiguration) throws(StartupError) {
        self.configuration = configuration
        policy = PeerPolicy(
            ownUID: CurrentProcess.uid, allowedUIDs: configuration.allowedUIDs, allowedGIDs: configuration.allowedGIDs,
            reviewerUIDs: configuration.reviewerUIDs, reviewerGIDs: configuration.reviewerGIDs)
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
        let socket = try ListeningSocket.take(configuration)
        listener = socket.fd
        listenerDescription = socket.description
        do {
            let writer = try Self.openJournal(configuration, settings: rules.current.rules.settings)
            counters.lastSeq = try writer.lastSeq()
            try Self.claimFleet(writer, configuration)
            epoll = try Epoll()
            refused = RefusedPeers(epoll: epoll, buffer: readBuffer)
            signals = try SignalChannel()
            pipeline = try CommitPipeline(
                writer: writer, metrics: metrics, backlog: commits.backlog,
                walLimitFrames: CurrentProcess.environment("OFFERTRACK_WAL_LIMIT_FRAMES").flatMap { Int($0) }
                    ?? CheckpointThread.defaultLimitFrames,
                erasureOriginals: configuration.forwardServers.isEmpty ? nil : ErasureOriginals())
            pipeline.setSharedUsers(rules.current.rules.settings.sharedUsers)
            pipeline.learning.start()
        } catch {
            socket.abandon(path: configuration.socketPath)
            if let error = error as? StartupError { throw error }
            throw StartupError(exitCode: .osError, "\(error)")
        }
        (consumer, forwarder) = try Self.fleetSides(configuration, pipeline: pipeline)
        if let address = configuration.metricsAddress {
            let path = configuration.databasePath
            do {
                metricsServer = try MetricsServer(address: address) { [metrics, forwarder, consumer, pipeline] in
                    let bytes = ["", "-wal"].compactMap { CurrentProcess.fileSize(path + $0) }.reduce(0, +)
                    return metrics.render(
                        journalBytes: Int64(bytes),
                        checkpointFailures: pipeline.checkpoints.health.withLock { $0.failures },
                        fleet: Self.fleetMetrics(forwarder: forwarder, consumer: consumer))
                }
            } catch {
                throw StartupError(
                    exitCode: error.isAddressInUse ? .unavailable : .osError, "--metrics-listen: \(error)")
            }
        } else {
            metricsServer = nil
        }
        watchdogIntervalMilliseconds = ServiceManager.watchdogIntervalMicroseconds().map { Int64($0 / 1000) }
        raiseDescriptorLimit()
    }

    /// Runs until SIGTERM/SIGINT and the drain; returns the exit code.
    public func run() -> ExitCode {
        guard startEventLoop() else { return .osError }
        while true {
            let events: [(token: UInt64, events: Epoll.Events)]
            do {
                events = try epoll.wait(timeoutMilliseconds: stopping ? 50 : 250)
            } catch {
                log("event loop failed: \(error)")
                return .osError
            }
            let now = startTurn()
            for event in events {
                switch event.token {
                case EpollToken.listener: acceptConnections(now: now)
                case EpollToken.signals: handleSignals(now: now)
                case EpollToken.commits: handleCommitResults(now: now)
                default: serviceConnection(event.token, events: event.events, now: now)
                }
            }
            finishTurn(now: now)
            if stopping && drainFinished(now: now) { break }
        }
        shutDown()
        return fatalFailure == nil ? .ok : .osError
    }

    /// Watches the signals, the writer's wakeup and the listener, starts the side threads and sends `READY=1`;
    /// false when the event loop cannot start.
    private func startEventLoop() -> Bool {
        do {
            try epoll.add(signals.fd, events: .readable, token: EpollToken.signals)
            try epoll.add(pipeline.wakeup.fd, events: .readable, token: EpollToken.commits)
            try watchListener(true)
        } catch {
            log("cannot start the event loop: \(error)")
            notifier.send("STATUS=failed: cannot start the event loop: \(error)".replacingNewlines())
            return false
        }
        metricsServer?.start()
        forwarder?.start()
        consumer?.start()
        lastTurnAt = Clock.monotonicMilliseconds()
        notifier.send("READY=1\nSTATUS=\(statusLine())")
        log(
            "listening on \(listenerDescription), journal \(configuration.databasePath) "
                + "(durability \(configuration.durability.rawValue)), \(rules.summary)")
        return true
    }

    /// The time of this turn; idleness counts at most `maxIdleStepMilliseconds` of the gap since the last.
    private func startTurn() -> Int64 {
        let now = Clock.monotonicMilliseconds()
        activeNow += min(max(now - lastTurnAt, 0), Self.maxIdleStepMilliseconds)
        lastTurnAt = now
        return now
    }

    /// After the events: readers resumed, the next batch handed over, metrics, housekeeping, and the drain begun
    /// after a fatal failure.
    private func finishTurn(now: Int64) {
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
    }

    /// After the drain: every connection closed, the side threads stopped, the journal closed.
    private func shutDown() {
        for connection in Array(connections.values) { close(connection) }
        refused.closeAll()
        forwarder?.stop()
        consumer?.stop()
        pipeline.closeJournal()
        log("stopped: \(counters.accepted) accepted, \(counters.duplicates) duplicate since start")
    }

    func log(_ message: String) {
        FileDescriptor.printError("offertrackd: \(message)")
    }
}
