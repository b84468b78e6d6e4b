import Dispatch
import Journal
import NATS
import OfferTrackDomain
import Posix
import Synchronization

/// An edge daemon's forwarder (SPEC section 10): every journaled record, in `seq` order, published to the
/// stream subject of its user's partition with `Nats-Msg-Id` = its id; the stream's acknowledgements advance a
/// durable watermark in the journal.
///
/// It runs on a thread of its own and never blocks ingest: records wait in the journal while the stream is
/// down or slow, at most `maxInFlight` are unacknowledged at once (so memory stays bounded whatever the outage),
/// and after any failure it publishes again from the watermark, with backoff (duplicates are harmless: the
/// stream's window and the central journal's unique ids absorb them). A publish the stream never answers (it
/// died holding it) counts as failed once nothing has been acknowledged for `acknowledgementTimeoutMilliseconds`.
///
/// The watermark holds for one stream: a stream deleted and created again (by an operator, or by a daemon after
/// it was lost) has lost whatever the centrals had not consumed yet, and nothing says what that was. So the
/// forwarder notes the stream's creation time with the watermark, checks it every few seconds, and on a new one
/// forwards the whole journal again (the central journals count what they hold as duplicates).
public final class EdgeForwarder: Sendable {
    /// How far forwarding has come.
    public struct Progress: Sendable, Equatable {
        /// Every record with a `seq` up to this was acknowledged by the stream.
        public var acknowledgedThrough: Int64
        /// Records journaled and not yet acknowledged.
        public var lagRecords: Int64
        /// Failed publishes since start (each followed by a resend from the watermark).
        public var failures: Int
        /// Published and not yet acknowledged by the stream, now.
        public var inFlight: Int
    }

    private struct State: Sendable {
        var sentThrough: Int64 = 0
        /// Published, not yet acknowledged: id → seq.
        var inFlight: [String: Int64] = [:]
        var failed = false
        var failures = 0
        var stopped = false
        var lagRecords: Int64 = 0
        var acknowledgedThrough: Int64 = 0
        /// When the stream last answered, or when records went in flight after none were (monotonic ms).
        var lastAnswerAt: Int64 = 0
    }

    private let log: ForwardingLog
    private let stream: FleetStream
    /// Whether the stream takes what is published, for `STATUS=`, the metrics and `offertrack status`.
    public let health: StreamHealth
    private let logLine: @Sendable (String) -> Void
    private let maxInFlight: Int
    private let acknowledgementTimeout: Int64
    private let state = Mutex(State())
    private let client = Mutex<JetStreamClient?>(nil)
    private let finished = Mutex(false)
    /// When the stream the watermark holds for was created (UTC nanoseconds); nil until known. The forwarder's
    /// thread only.
    private let streamCreated = Mutex<Int64?>(nil)
    private let queue = DispatchQueue(label: "offertrack.forwarder")

    /// Forwards the journal at `journalPath` to `stream` on `servers` (created when absent), from the stored
    /// watermark or, with `startingAfter`, from the record after that `seq`. Throws `FleetStream.Mismatch` when
    /// the cluster answers now with a stream that records another P.
    public init(
        journalPath: String, servers: [String], stream: FleetStream, maxInFlight: Int = 4096,
        acknowledgementTimeoutMilliseconds: Int64 = 5_000, name: String = "offertrack-edge",
        startingAfter: Int64? = nil, log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws {
        self.log = try ForwardingLog(path: journalPath)
        self.maxInFlight = maxInFlight
        acknowledgementTimeout = acknowledgementTimeoutMilliseconds
        self.stream = stream
        health = StreamHealth(what: "forwarding to the stream \(stream.name)", log: log)
        self.logLine = log
        let watermark = try startingAfter ?? self.log.watermark()
        let created = try self.log.streamCreated()
        streamCreated.withLock { $0 = created }
        state.withLock {
            $0.sentThrough = watermark
            $0.acknowledgedThrough = watermark
        }
        let connected = try JetStreamClient(servers: servers, name: name, maxPending: Int64(maxInFlight) * 2) {
            [weak self] ack in self?.acknowledged(ack)
        }
        try stream.checkAgreement(on: connected)
        client.withLock { $0 = connected }
    }

    /// Starts forwarding on the forwarder's thread.
    public func start() {
        queue.async { [self] in run() }
    }

    /// Stops after the current step and stores the watermark; waits up to `timeoutSeconds`.
    public func stop(timeoutSeconds: Double = 5) {
        state.withLock { $0.stopped = true }
        let deadline = Clock.monotonicMilliseconds() + Int64(timeoutSeconds * 1000)
        while !finished.withLock({ $0 }) && Clock.monotonicMilliseconds() < deadline { Sleep.milliseconds(5) }
    }

    public var progress: Progress {
        state.withLock {
            Progress(
                acknowledgedThrough: $0.acknowledgedThrough, lagRecords: $0.lagRecords, failures: $0.failures,
                inFlight: $0.inFlight.count)
        }
    }

    // MARK: - The forwarder's thread

    private func run() {
        var backoff: Int64 = 0
        var streamReady = false
        // Stored at once, so that the journal says it is forwarded (status shows the lag) from the start.
        var lastStored: Int64 = -1
        var lastStoredAt = Clock.monotonicMilliseconds()
        var lastReported: String??
        var lastIncarnationCheck: Int64?
        defer { finished.withLock { $0 = true } }
        while !state.withLock({ $0.stopped }) {
            let now = Clock.monotonicMilliseconds()
            let problem = health.state.problem
            if lastReported != .some(problem), (try? log.record(StreamReport(problem: problem))) != nil {
                lastReported = problem
            }
            let watermark = updateWatermark()
            if watermark != lastStored
                && (lastStored < 0 || now - lastStoredAt >= 200 || state.withLock({ $0.inFlight.isEmpty }))
            {
                if (try? log.setWatermark(watermark)) != nil {
                    lastStored = watermark
                    lastStoredAt = now
                }
            }
            if backoff > 0 {
                Sleep.milliseconds(Int(backoff))
            }
            guard let client = client.withLock({ $0 }) else { return }
            if !streamReady {
                do {
                    if let megabytes = try stream.ensure(on: client) {
                        logLine(
                            "created the stream \(stream.name) (\(megabytes) MiB, \(stream.replicas) "
                                + "replicas, --partitions-total \(stream.partitionsTotal))")
                    }
                    streamReady = true
                    lastIncarnationCheck = nil
                } catch {
                    health.failed("\(error)", immediate: error.isPersistent)
                    backoff = Self.nextBackoff(backoff)
                    continue
                }
            }
            if lastIncarnationCheck.map({ now - $0 >= Self.incarnationCheckMilliseconds }) ?? true, client.isConnected {
                lastIncarnationCheck = now
                if startOverIfCreatedAgain(client) { lastStored = -1 }
            }
            failIfUnanswered(now: now)
            if restartAfterFailure() {
                // The stream may be gone (deleted, or its cluster re-created): made sure of again first.
                streamReady = false
                backoff = Self.nextBackoff(backoff)
                continue
            }
            let room = maxInFlight - state.withLock { $0.inFlight.count }
            let from = state.withLock { $0.sentThrough }
            guard room > 0, let entries = try? log.entries(after: from, limit: min(room, 512)), !entries.isEmpty
            else {
                if let last = try? log.lastSeq() {
                    state.withLock { $0.lagRecords = max(0, last - $0.acknowledgedThrough) }
                }
                Sleep.milliseconds(room > 0 ? 20 : 2)
                continue
            }
            var published = 0
            for entry in entries {
                state.withLock {
                    if $0.inFlight.isEmpty { $0.lastAnswerAt = Clock.monotonicMilliseconds() }
                    $0.inFlight[entry.id] = entry.seq
                }
                let subject = Partition.subject(Partition.of(user: entry.user, total: stream.partitionsTotal))
                do {
                    try client.publishAsync(subject: subject, data: entry.line, messageID: entry.id)
                } catch {
                    health.failed("publishing to \(stream.name) failed: \(error)")
                    state.withLock {
                        $0.inFlight[entry.id] = nil
                        $0.failed = true
                    }
                    break
                }
                state.withLock { $0.sentThrough = entry.seq }
                published += 1
            }
            if published == entries.count { backoff = 0 }
        }
        let watermark = updateWatermark()
        try? log.setWatermark(watermark)
    }

    /// How often the stream's creation time is checked (a stream created again is found within this).
    static let incarnationCheckMilliseconds: Int64 = 2_000

    /// Checks that the stream is the one the watermark holds for; when it was created again, forwards the whole
    /// journal again (from `seq` 0) and returns true. The first stream seen is recorded.
    private func startOverIfCreatedAgain(_ client: JetStreamClient) -> Bool {
        guard let created = (try? client.streamInfo(stream.name))?.created else { return false }
        let known = streamCreated.withLock { $0 }
        guard known != created else { return false }
        guard known != nil else {
            if (try? log.setStream(created: created, watermark: state.withLock { $0.acknowledgedThrough })) != nil {
                streamCreated.withLock { $0 = created }
            }
            return false
        }
        // What is in flight may be answered by the stream that is gone: waited for, then forgotten.
        try? client.waitForPublishes(timeoutMilliseconds: 2_000)
        guard (try? log.setStream(created: created, watermark: 0)) != nil else { return false }
        streamCreated.withLock { $0 = created }
        let through = state.withLock { state in
            defer {
                state.inFlight.removeAll()
                state.failed = false
                state.sentThrough = 0
                state.acknowledgedThrough = 0
            }
            return state.acknowledgedThrough
        }
        logLine(
            "the stream \(stream.name) was created again (it may have lost records the central daemons had not "
                + "consumed yet): forwarding the whole journal again, \(through) records forwarded before")
        return true
    }

    /// Every record up to the returned `seq` is acknowledged: just below the oldest unacknowledged one.
    private func updateWatermark() -> Int64 {
        let last = (try? log.lastSeq()) ?? 0
        return state.withLock { state in
            let watermark = (state.inFlight.values.min().map { $0 - 1 } ?? state.sentThrough)
            state.acknowledgedThrough = max(state.acknowledgedThrough, watermark)
            state.lagRecords = max(0, last - state.acknowledgedThrough)
            return state.acknowledgedThrough
        }
    }

    /// Records in flight with no answer from the stream for the timeout are lost (a server died holding them):
    /// counted as a failure, so they are published again.
    private func failIfUnanswered(now: Int64) {
        let unanswered = state.withLock { state in
            guard !state.inFlight.isEmpty && now - state.lastAnswerAt > acknowledgementTimeout else { return false }
            state.failed = true
            return true
        }
        if unanswered {
            health.failed(
                "the stream \(stream.name) answered no publish for \(acknowledgementTimeout / 1000) s; publishing "
                    + "again from the watermark")
        }
    }

    /// After a failed publish, publishes again from the watermark; true when it did.
    private func restartAfterFailure() -> Bool {
        state.withLock { state in
            guard state.failed else { return false }
            let watermark = state.inFlight.values.min().map { $0 - 1 } ?? state.sentThrough
            state.acknowledgedThrough = max(state.acknowledgedThrough, watermark)
            state.sentThrough = state.acknowledgedThrough
            state.inFlight.removeAll()
            state.failed = false
            state.failures += 1
            return true
        }
    }

    /// Called on libnats's thread for every publish.
    private func acknowledged(_ ack: PublishAck) {
        let counted = state.withLock { state -> Bool in
            guard let id = ack.messageID, state.inFlight[id] != nil else { return false }
            state.lastAnswerAt = Clock.monotonicMilliseconds()
            if ack.failure == nil {
                state.inFlight[id] = nil
            } else {
                // One failure per resend, not one per message in flight.
                defer { state.failed = true }
                return !state.failed
            }
            return true
        }
        guard counted else { return }
        if let failure = ack.failure {
            health.failed("the stream \(stream.name) refused a publish: \(failure)")
        } else {
            health.succeeded()
        }
    }

    private static func nextBackoff(_ current: Int64) -> Int64 {
        min(5_000, max(100, current * 2))
    }
}
