import Posix

/// The event loop's peers: the listening socket (whether epoll watches it, accepting paused after a failure), the
/// connections served and the refused ones lingering, the answer budget over all of them, the buffer they are
/// read into, and the idle clock their timeouts count on. `Daemon+Accepting` and `Daemon+Connections` act on it.
final class Connections {
    /// The listening socket's descriptor until the drain begins.
    var listener: Int32?
    /// Whether epoll watches `listener`.
    var listenerWatched = false
    /// How the socket was obtained (socket activation or `--socket`), for the log.
    let listenerDescription: String
    /// Who may connect, and who may send reviews and erasures.
    let policy: PeerPolicy
    /// When accepting resumes after an accept failure; nil while not paused.
    var acceptPausedUntil: Int64?
    var acceptPause = AcceptPause()

    /// The connections served, by their epoll token.
    private var open: [UInt64: ClientConnection] = [:]
    /// Refused peers lingering to read why.
    let refused: RefusedPeers
    private var nextToken = Daemon.EpollToken.firstConnection
    /// Answer bytes not yet written, over every connection.
    let answers = AnswerBudget(limit: Daemon.maxUnsentAnswerBytes)
    /// Connections held back by the answer budget, read again once it is half free.
    var pausedForAnswers: Set<UInt64> = []
    /// What connections are peeked and read into (`Daemon.readChunk` bytes).
    let readBuffer: ReadBuffer
    /// Lines handled in the current `read(from:)`.
    var linesThisWakeup = 0

    /// Milliseconds the event loop has been running (monotonic time minus the gaps it was stopped): what the
    /// idle timeout counts.
    private(set) var activeNow: Int64 = 0
    private var lastTurnAt: Int64 = 0
    /// When idle connections were last looked for (once a second).
    var lastIdleSweep: Int64 = 0

    init(listener: Int32, description: String, policy: PeerPolicy, epoll: Epoll) {
        self.listener = listener
        listenerDescription = description
        self.policy = policy
        readBuffer = ReadBuffer(capacity: Daemon.readChunk)
        refused = RefusedPeers(epoll: epoll, buffer: readBuffer)
    }

    /// The connections served now.
    var count: Int { open.count }
    /// A snapshot of the connections served, to close or settle them while the table changes.
    var all: [ClientConnection] { Array(open.values) }
    subscript(token: UInt64) -> ClientConnection? { open[token] }
    /// Whether every answer was written to its socket.
    var allFlushed: Bool { open.values.allSatisfy { $0.pendingOutputBytes == 0 } }

    /// The connections without progress for more than `limit` milliseconds of the idle clock.
    func idle(longerThan limit: Int64) -> [ClientConnection] {
        open.values.filter { activeNow - $0.lastProgressMilliseconds > limit }
    }

    /// A token for the next connection (served or refused).
    func takeToken() -> UInt64 {
        defer { nextToken += 1 }
        return nextToken
    }

    func insert(_ connection: ClientConnection) { open[connection.token] = connection }

    /// Removes the connection with `token`; false when it was not served.
    func remove(_ token: UInt64) -> Bool {
        guard open.removeValue(forKey: token) != nil else { return false }
        pausedForAnswers.remove(token)
        return true
    }

    /// Starts the idle clock (when the event loop starts).
    func startClock(now: Int64) { lastTurnAt = now }

    /// A turn of the event loop at `now`: idleness counts at most `Daemon.maxIdleStepMilliseconds` of the gap since
    /// the last one.
    func advanceClock(to now: Int64) {
        activeNow += min(max(now - lastTurnAt, 0), Daemon.maxIdleStepMilliseconds)
        lastTurnAt = now
    }
}
