import Dispatch
import JournalStore
import NATS
import OfferTrackDomain
import Posix
import Synchronization

extension EdgeForwarder {
    /// Publishes `entries` (the records after `sentThrough`, in `seq` order) grouped into messages; false after a
    /// failed publish. Every message is in flight before the first is published, so the watermark cannot pass
    /// a record whose message failed or was not published yet, whatever order the acknowledgements come in.
    func publish(_ entries: [ForwardingLog.Entry], on client: JetStreamClient) -> Bool {
        let read = entries[0].seq...entries[entries.count - 1].seq
        let messages = self.messages(entries, on: client)
        state.withLock { state in
            if state.inFlight.isEmpty { state.lastAnswerAt = Clock.monotonicMilliseconds() }
            for (batch, id) in messages { state.add(id, batch, read: read) }
            state.sentThrough = read.upperBound
        }
        return send(messages, on: client)
    }

    /// After a failure: publishes the messages in flight again, each read of the journal they came from read
    /// and grouped again. A read that groups otherwise now (a server with another `max_payload`) has all its
    /// messages published in place of those in flight. False after a failed publish.
    func publishInFlightAgain(on client: JetStreamClient) -> Bool {
        // Published again, the unanswered ones are forgotten: lost publishes would stay pending in libnats.
        client.forgetPendingPublishes()
        let reads = state.withLock { state in
            state.resend = false
            state.lastAnswerAt = Clock.monotonicMilliseconds()
            return Set(state.inFlight.values.map(\.read)).sorted { $0.lowerBound < $1.lowerBound }
        }
        for read in reads {
            guard let entries = try? log.entries(after: read.lowerBound - 1, through: read.upperBound) else {
                state.withLock { $0.failed = true }
                return false
            }
            let formed = messages(entries, on: client)
            let again = state.withLock { state in
                let held = state.inFlight.filter { $0.value.read == read }
                if held.keys.allSatisfy({ id in formed.contains { $0.id == id } }) {
                    return formed.filter { held[$0.id] != nil }
                }
                for (id, message) in held {
                    state.inFlight[id] = nil
                    state.inFlightRecords -= message.records
                }
                for (batch, id) in formed { state.add(id, batch, read: read) }
                return formed
            }
            guard send(again, on: client) else { return false }
        }
        return true
    }

    /// `entries` grouped into messages, with their ids.
    func messages(_ entries: [ForwardingLog.Entry], on client: JetStreamClient) -> [(
        batch: StreamBatch, id: String
    )] {
        let serverLimit = Int(client.maxPayload) - Self.headerAllowance
        return StreamBatch.group(
            withErasuresAsReceived(entries), partitionsTotal: stream.partitionsTotal,
            maxBytes: serverLimit > 0 ? min(maxMessageBytes, serverLimit) : maxMessageBytes,
            maxRecords: maxMessageRecords
        ).map { ($0, $0.messageID(journal: journalID)) }
    }

    /// Publishes `messages` (already in flight); false after a failed publish.
    func send(_ messages: [(batch: StreamBatch, id: String)], on client: JetStreamClient) -> Bool {
        for (batch, id) in messages {
            do {
                try client.publishAsync(
                    subject: Partition.subject(batch.partition), data: batch.payload, messageID: id)
            } catch {
                health.failed("publishing to \(stream.name) failed: \(error)")
                state.withLock { $0.failed = true }
                return false
            }
        }
        return true
    }

    /// `entries` with each erasure's line as the daemon received it, naming its person, where the daemon kept it
    /// (SPEC 10: the central journal holding the person applies it). An erasure that renamed its person and has
    /// no such line (the edge restarted before forwarding it, or `offertrack forward` sends it again) goes renamed,
    /// and the log says so.
    func withErasuresAsReceived(_ entries: [ForwardingLog.Entry]) -> [ForwardingLog.Entry] {
        entries.map { entry in
            guard entry.keptPartition != nil, entry.user.utf8.starts(with: Erasure.namePrefix.utf8) else {
                return entry
            }
            if let original = erasureOriginals?.original(
                of: entry.id, journaledUser: entry.user, journaledLine: entry.line)
            {
                state.withLock { $0.sentOriginals[entry.seq] = entry.id }
                return ForwardingLog.Entry(
                    seq: entry.seq, id: entry.id, user: entry.user, line: original, receivedAt: entry.receivedAt,
                    keptPartition: entry.keptPartition)
            }
            let unwarned = state.withLock { state in
                defer { state.warnedThrough = max(state.warnedThrough, entry.seq) }
                return entry.seq > max(state.warnedThrough, startWatermark)
            }
            if unwarned, entry.user == Erasure.name(erasureID: entry.id) {
                logLine.error(
                    "the erasure \(entry.id) (seq \(entry.seq)) is forwarded without the name of the person it "
                        + "forgets (its line as first sent is kept only until the edge daemon forwards it: the edge "
                        + "restarted first, or offertrack forward sends it again): a central journal holding that "
                        + "person's records under their name cannot apply it; if offertrack verify --edge names such "
                        + "records, send the erasure's line as first sent to that central daemon (offertrack ingest "
                        + "--socket CENTRAL FILE; explain --user erased:ID gives its ts and ticket), not a new erase, "
                        + "which would give the person a second name")
            }
            return entry
        }
    }
}
