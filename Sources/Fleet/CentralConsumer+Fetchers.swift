import Dispatch
import NATS
import OfferTrackDomain
import Posix
import Synchronization
import WireFormat

extension CentralConsumer {
    // MARK: - The partitions' fetchers

    /// Batches a fetcher may have fetched and not yet seen committed: it fetches the next while the committer
    /// commits the last.
    static let batchesAheadPerPartition = 2

    /// One fetcher per partition, each on a thread of its own, for the current generation.
    func startFetchers(_ subscriptions: [PullSubscription]) {
        let generation = inbox.withLock { inbox in
            inbox.generation += 1
            inbox.pending.removeAll()
            return inbox.generation
        }
        for (index, subscription) in subscriptions.enumerated() {
            running.withLock { $0 += 1 }
            DispatchQueue(label: "offertrack.consumer.\(partitions[index])").async { [self] in
                defer { running.withLock { $0 -= 1 } }
                fetchLoop(index: index, subscription: subscription, generation: generation)
            }
        }
    }

    func isCurrent(_ generation: Int) -> Bool {
        !stopped.withLock { $0 } && inbox.withLock { $0.generation } == generation
    }

    /// Fetches partition `index` until its generation ends: each batch handed to the committer, at most
    /// `batchesAheadPerPartition` not yet committed; a failure handed over, and the fetcher ends.
    func fetchLoop(index: Int, subscription: PullSubscription, generation: Int) {
        let fetcher = Fetcher()
        defer { fetcher.acknowledge() }
        // Messages asked for in one fetch: few until their size is known, then as many as `fetchBytes` holds.
        var fetchMessages = min(batch, Self.firstFetchMessages)
        while isCurrent(generation) {
            let slot = fetcher.slots.wait(timeout: .now() + .milliseconds(Int(Self.idleWaitMilliseconds)))
            fetcher.acknowledge()
            guard slot == .success else { continue }
            let messages: [NATSMessage]
            do {
                messages = try subscription.fetch(
                    batch: fetchMessages, timeoutMilliseconds: Self.fetchWaitMilliseconds)
            } catch {
                fetcher.slots.signal()
                health.failed(
                    "fetching partition \(partitions[index]) of \(stream.name) failed: \(error)",
                    part: Self.healthPart(partitions[index]))
                inbox.withLock { $0.failures.append("\(error)") }
                arrived.signal()
                return
            }
            health.succeeded(part: Self.healthPart(partitions[index]))
            let payloads = messages.map(\.data)
            if let largest = payloads.map(\.count).max() {
                fetchMessages = max(1, min(batch, Self.fetchBytes / max(1, largest)))
            }
            // The messages left in the partition, in records at this fetch's records per message.
            let newest = messages.last?.metadata
            let records = payloads.reduce(0) { $0 + StreamBatch.lineCount($1) }
            let pendingRecords = newest.map { newest in
                let count = UInt64(messages.count)
                return (newest.pending * UInt64(records) + count - 1) / count
            }
            let handed = inbox.withLock { inbox in
                inbox.pending[index] = (pendingRecords ?? 0, newest?.storedAtNanoseconds)
                guard !messages.isEmpty, inbox.generation == generation else { return false }
                inbox.batches.append(FetchedBatch(messages: messages, payloads: payloads, fetcher: fetcher))
                return true
            }
            if !handed {
                // Fetched for a generation that ended (a consumer deleted and bound again under its name answers
                // this fetcher too): delivered again at once, not after the stream's acknowledgement wait.
                for message in messages { try? message.negativelyAcknowledge() }
            }
            if handed { arrived.signal() } else { fetcher.slots.signal() }
        }
    }

    /// A partition's fetches as `StreamHealth` tells them apart (sorted in partition order).
    static func healthPart(_ partition: Int) -> String {
        "partition " + String(repeating: "0", count: max(0, 5 - String(partition).count)) + String(partition)
    }

    /// How long a fetch waits for its partition's messages when the stream holds none now. It adds no latency: a
    /// waiting fetch returns as soon as a message arrives (nats-server answers a pull request at its first message
    /// when more than one are asked for, and a pull request for one message with it). What it sets is how many
    /// pull requests an idle partition costs the stream's servers: each is proposed to the consumer's replicas
    /// when it starts and when it expires, so at 100 ms the 16 partitions of an idle central kept three
    /// nats-server nodes at 12–20 % of a core; at 1 s (and one request for the consumers' names every 2 s) the bench
    /// measures 2–2.4 %. A fetcher of a generation that ended, or of a consumer being stopped, ends within it.
    static let fetchWaitMilliseconds: Int64 = 1_000
    /// How long the committer and a fetcher waiting for room wait before they look again.
    static let idleWaitMilliseconds: Int64 = 250
    /// The payload bytes a fetch asks for (in messages, from the largest of the last fetch), and the messages of a
    /// partition's first fetch: memory stays bounded (partitions × batches ahead × this) whatever the edges'
    /// messages hold.
    static let fetchBytes = 1 << 20
    static let firstFetchMessages = 8
}
