import Dispatch
import NATS
import OfferTrackDomain
import Posix
import Synchronization

/// An edge daemon's forwarder (SPEC section 10): the journal read in `seq` order, up to `recordsPerRead`
/// records a read (after a read that reached the journal's end, the next waits `lingerMilliseconds` for more
/// records to come), each read's records grouped by their user's partition into messages
/// (`StreamBatch`: at most `maxMessageRecords` records and `maxMessageBytes` bytes each) published to the
/// partition's subject with `Nats-Msg-Id` naming the journal and the records carried; the stream's
/// acknowledgements advance a durable watermark in the journal, past a record only once its message and every
/// message holding an earlier record were acknowledged.
///
/// It runs on a thread of its own and never blocks ingest: records wait in the journal while the stream is
/// down or slow, at most `maxInFlight` records are unacknowledged at once (so memory stays bounded whatever the
/// outage), and after any failure it publishes again from the watermark, with backoff (duplicates are
/// harmless: the stream drops a message it holds, and the central journal's unique ids answer a record it holds
/// as a duplicate). A publish the stream never answers (it died holding it) counts as failed once nothing has
/// been acknowledged for `acknowledgementTimeoutMilliseconds`. After a failure libnats's unanswered publishes are
/// forgotten and the messages in flight are published again as they were (formed again from the same reads of
/// the journal, so with the same ids: the stream drops those it stored), then forwarding goes on after them;
/// after a restart it starts at the stored watermark, with messages formed afresh.
///
/// The watermark holds for one stream: a stream deleted and created again (by an operator, or by a daemon after
/// it was lost) has lost whatever the centrals had not consumed yet, and nothing says what that was. So the
/// forwarder notes the stream's creation time with the watermark, checks it every few seconds, and on a new one
/// forwards the whole journal again (the central journals count what they hold as duplicates).
public final class EdgeForwarder: Sendable {
    let log: ForwardingLog
    let stream: FleetStream
    /// Whether the stream takes what is published, for `STATUS=`, the metrics and `offertrack status`.
    public let health: StreamHealth
    let logLine: Logger
    private let maxInFlight: Int
    private let recordsPerRead: Int
    let maxMessageRecords: Int
    let maxMessageBytes: Int
    private let lingerMilliseconds: Int
    private let acknowledgementTimeout: Int64
    /// The journal's name in message ids (`ForwardingLog.journalID`).
    let journalID: String
    let state = Mutex(State())
    private let client = Mutex<JetStreamClient?>(nil)
    private let finished = Mutex(false)
    /// When the stream the watermark holds for was created (UTC nanoseconds); nil until known. The forwarder's
    /// thread only.
    private let streamCreated = Mutex<Int64?>(nil)
    private let queue = DispatchQueue(label: "offertrack.forwarder")
    /// The daemon's erasures as received, sent in place of their renamed lines.
    let erasureOriginals: ErasureOriginals?
    /// The watermark at start: a renamed erasure above it with no original is forwarded without its person.
    let startWatermark: Int64

    /// Forwards the journal at `journalPath` to `stream` on `servers` (created when absent), from the stored
    /// watermark or, with `startingAfter`, from the record after that `seq`. Throws `FleetStream.Mismatch` when
    /// the cluster answers now with a stream that records another P. A message's bytes stay under the servers'
    /// `max_payload` as well as `maxMessageBytes`.
    public init(
        journalPath: String, servers: [String], stream: FleetStream, maxInFlight: Int = 8_192,
        recordsPerRead: Int = 4_096, maxMessageRecords: Int = StreamBatch.defaultMaxRecords,
        maxMessageBytes: Int = StreamBatch.defaultMaxBytes, lingerMilliseconds: Int = 100,
        acknowledgementTimeoutMilliseconds: Int64 = 5_000,
        name: String = "offertrack-edge", startingAfter: Int64? = nil, erasureOriginals: ErasureOriginals? = nil,
        logger log: Logger = .discard
    ) throws {
        self.erasureOriginals = erasureOriginals
        self.log = try ForwardingLog(path: journalPath)
        journalID = try self.log.journalID()
        self.maxInFlight = maxInFlight
        self.recordsPerRead = max(1, min(recordsPerRead, maxInFlight))
        self.maxMessageRecords = max(1, maxMessageRecords)
        self.maxMessageBytes = max(1, maxMessageBytes)
        self.lingerMilliseconds = max(0, lingerMilliseconds)
        acknowledgementTimeout = acknowledgementTimeoutMilliseconds
        self.stream = stream
        health = StreamHealth(what: "forwarding to the stream \(stream.name)", log: log)
        self.logLine = log
        let watermark = try startingAfter ?? self.log.watermark()
        startWatermark = watermark
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

    /// Stops after the current step, stores the watermark and closes the journal's connections; waits up to
    /// `timeoutSeconds`.
    public func stop(timeoutSeconds: Double = 5) {
        state.withLock { $0.stopped = true }
        let deadline = Clock.monotonicMilliseconds() + Int64(timeoutSeconds * 1000)
        while !finished.withLock({ $0 }) && Clock.monotonicMilliseconds() < deadline { Sleep.milliseconds(5) }
    }

    public var progress: Progress {
        state.withLock {
            Progress(
                acknowledgedThrough: $0.acknowledgedThrough, lagRecords: $0.lagRecords, failures: $0.failures,
                inFlight: $0.inFlightRecords, messages: $0.messages, messageRecords: $0.messageRecords)
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
        defer {
            // Closed before the daemon's writer, so that the writer's close is the last one, which checkpoints the
            // journal and removes its WAL.
            log.close()
            finished.withLock { $0 = true }
        }
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
                pause(milliseconds: backoff)
            }
            guard let client = client.withLock({ $0 }) else { return }
            if !streamReady {
                do {
                    if let megabytes = try stream.ensure(on: client) {
                        logLine.notice(
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
            if state.withLock({ $0.resend }) {
                if publishInFlightAgain(on: client) { backoff = 0 }
                continue
            }
            // A read waits for room for half the records in flight at most (or for none in flight), so that a
            // backlog goes in large reads, and so in large messages.
            let (inFlight, from) = state.withLock { ($0.inFlightRecords, $0.sentThrough) }
            let room = maxInFlight - inFlight
            let limit = min(room, recordsPerRead)
            let roomEnough = room >= min(recordsPerRead, maxInFlight / 2) || (inFlight == 0 && room > 0)
            guard roomEnough, let entries = try? log.entries(after: from, limit: limit), !entries.isEmpty else {
                if let last = try? log.lastSeq() {
                    state.withLock { $0.lagRecords = max(0, last - $0.acknowledgedThrough) }
                }
                Sleep.milliseconds(roomEnough ? 20 : 2)
                continue
            }
            if publish(entries, on: client) { backoff = 0 }
            // Caught up with the journal: the next read waits for the records that come meanwhile.
            if entries.count < limit, lingerMilliseconds > 0 { Sleep.milliseconds(lingerMilliseconds) }
        }
        let watermark = updateWatermark()
        try? log.setWatermark(watermark)
    }

    /// Sleeps `milliseconds`, or until `stop()` (a backoff of seconds does not hold up the daemon's stop).
    private func pause(milliseconds: Int64) {
        let end = Clock.monotonicMilliseconds() + milliseconds
        while !state.withLock({ $0.stopped }) {
            let left = end - Clock.monotonicMilliseconds()
            guard left > 0 else { return }
            Sleep.milliseconds(Int(min(left, 20)))
        }
    }

    /// Bytes of a message's `max_payload` left for its headers (`Nats-Msg-Id` and the protocol's).
    static let headerAllowance = 4_096

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
        client.forgetPendingPublishes()
        guard (try? log.setStream(created: created, watermark: 0)) != nil else { return false }
        streamCreated.withLock { $0 = created }
        let through = state.withLock { state in
            defer {
                state.inFlight.removeAll()
                state.inFlightRecords = 0
                state.failed = false
                state.resend = false
                state.sentThrough = 0
                state.acknowledgedThrough = 0
            }
            return state.acknowledgedThrough
        }
        logLine.warning(
            "the stream \(stream.name) was created again (it may have lost records the central daemons had not "
                + "consumed yet): forwarding the whole journal again, \(through) records forwarded before")
        return true
    }

    /// Every record up to the returned `seq` is acknowledged: just below the oldest unacknowledged one.
    private func updateWatermark() -> Int64 {
        let last = (try? log.lastSeq()) ?? 0
        let (watermark, acknowledgedOriginals) = state.withLock { state in
            let watermark = state.oldestInFlight.map { $0 - 1 } ?? state.sentThrough
            state.acknowledgedThrough = max(state.acknowledgedThrough, watermark)
            state.lagRecords = max(0, last - state.acknowledgedThrough)
            let acknowledged = state.sentOriginals.filter { $0.key <= state.acknowledgedThrough }
            for seq in acknowledged.keys { state.sentOriginals[seq] = nil }
            return (state.acknowledgedThrough, Array(acknowledged.values))
        }
        erasureOriginals?.forget(acknowledgedOriginals)
        return watermark
    }

    /// Records in flight with no answer from the stream for the timeout are lost (a server died holding them):
    /// counted as a failure, so they are published again.
    private func failIfUnanswered(now: Int64) {
        let unanswered = state.withLock { state in
            guard !state.inFlight.isEmpty, !state.resend, now - state.lastAnswerAt > acknowledgementTimeout else {
                return false
            }
            state.failed = true
            return true
        }
        if unanswered {
            health.failed(
                "the stream \(stream.name) answered no publish for \(acknowledgementTimeout / 1000) s; publishing "
                    + "again from the watermark (\(FleetStream.unansweredHint))")
        }
    }

    /// After a failed publish, publishes the messages in flight again (`publishInFlightAgain`); true when it
    /// will.
    private func restartAfterFailure() -> Bool {
        state.withLock { state in
            guard state.failed else { return false }
            state.resend = !state.inFlight.isEmpty
            state.failed = false
            state.failures += 1
            return true
        }
    }

    /// Called on libnats's thread for every publish.
    private func acknowledged(_ ack: PublishAck) {
        let counted = state.withLock { state -> Bool in
            guard let id = ack.messageID, let message = state.inFlight[id] else { return false }
            state.lastAnswerAt = Clock.monotonicMilliseconds()
            if ack.failure == nil {
                state.inFlight[id] = nil
                state.inFlightRecords -= message.records
                state.messages += 1
                state.messageRecords += message.records
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
