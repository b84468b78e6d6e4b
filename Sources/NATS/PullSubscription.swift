import CNATS

/// A bound pull subscription of a durable consumer: fetch a batch, process it, acknowledge each message.
///
/// Lifetimes follow libnats's raw pointers: a fetched message points at its subscription (an acknowledgement
/// goes through it) and a subscription at its connection, and none of them counts those references. So each
/// `NATSMessage` keeps its subscription alive and each subscription its client: whatever order callers drop them
/// in, a message is destroyed (or acknowledged) before its subscription, and a subscription before its connection.
public final class PullSubscription: @unchecked Sendable {
    private let subscription: OpaquePointer
    /// The connection this subscription's messages are acknowledged over; released only after the subscription.
    private let client: JetStreamClient

    init(_ subscription: OpaquePointer, client: JetStreamClient) {
        self.subscription = subscription
        self.client = client
    }

    deinit { natsSubscription_Destroy(subscription) }

    /// Up to `batch` messages, waiting at most `timeoutMilliseconds` for the first; empty when none came.
    ///
    /// Messages that arrived after an earlier fetch gave up (its time ran out while the server was still
    /// sending) wait in the subscription's queue; they are taken one fetch of one at a time. libnats 3.4.1's
    /// `natsSubscription_Fetch` overflows its array of `batch` messages when it starts with more than half a batch
    /// queued and more arrive (fixed in nats.c 3.9.0, #749), so a fetch of more than one starts only on an empty
    /// queue. Not used from two threads at once.
    public func fetch(batch: Int, timeoutMilliseconds: Int64) throws(NATSError) -> [NATSMessage] {
        var messages: [NATSMessage] = []
        while messages.count < batch, queued > 0 {
            do {
                let taken = try fetchOnce(batch: 1, timeoutMilliseconds: timeoutMilliseconds)
                guard !taken.isEmpty else { break }
                messages += taken
            } catch {
                if messages.isEmpty { throw error }
                break  // what was taken is returned; the failure comes again at the next fetch
            }
        }
        if !messages.isEmpty { return messages }
        return try fetchOnce(batch: batch, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Messages (user messages or the server's status messages) waiting in the subscription's queue.
    private var queued: Int32 {
        var count: Int32 = 0
        guard natsSubscription_GetPending(subscription, &count, nil) == NATS_OK else { return 0 }
        return count
    }

    private func fetchOnce(batch: Int, timeoutMilliseconds: Int64) throws(NATSError) -> [NATSMessage] {
        var list = natsMsgList()
        var code = jsErrCode(rawValue: 0)
        let status = natsSubscription_Fetch(&list, subscription, Int32(batch), timeoutMilliseconds, &code)
        if status == NATS_TIMEOUT { return [] }
        try NATSError.check("natsSubscription_Fetch", status, jetStreamCode: code)
        var messages: [NATSMessage] = []
        messages.reserveCapacity(Int(list.Count))
        for index in 0..<Int(list.Count) {
            guard let message = list.Msgs[index] else { continue }
            messages.append(NATSMessage(message, subscription: self))
            list.Msgs[index] = nil
        }
        natsMsgList_Destroy(&list)
        return messages
    }
}

/// A message fetched from a stream; it owns the C message and destroys it when released.
public final class NATSMessage: @unchecked Sendable {
    private let message: OpaquePointer
    /// The subscription the C message points at (for acknowledgements); released only after the message.
    private let subscription: PullSubscription

    init(_ message: OpaquePointer, subscription: PullSubscription) {
        self.message = message
        self.subscription = subscription
    }

    deinit { natsMsg_Destroy(message) }

    public var subject: String { String(cString: natsMsg_GetSubject(message)) }

    /// The payload's bytes.
    public var data: [UInt8] {
        let length = Int(natsMsg_GetDataLength(message))
        guard length > 0, let bytes = natsMsg_GetData(message) else { return [] }
        return bytes.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    /// The first value of header `name`, or nil.
    public func header(_ name: String) -> String? {
        var value: UnsafePointer<CChar>?
        guard natsMsgHeader_Get(message, name, &value) == NATS_OK, let value else { return nil }
        return String(cString: value)
    }

    /// The stream's delivery metadata: messages still pending for the consumer after this one, and when the
    /// stream stored it (UTC nanoseconds); nil for a message that did not come from a consumer.
    public var metadata: (pending: UInt64, storedAtNanoseconds: Int64)? {
        var meta: UnsafeMutablePointer<jsMsgMetaData>?
        guard natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta else { return nil }
        defer { jsMsgMetaData_Destroy(meta) }
        return (meta.pointee.NumPending, meta.pointee.Timestamp)
    }

    /// Acknowledges the message to its consumer (not redelivered after this).
    public func acknowledge() throws(NATSError) {
        try NATSError.check("natsMsg_Ack", natsMsg_Ack(message, nil))
    }

    /// Tells its consumer the message was not processed, so that it is delivered again now rather than after the
    /// consumer's acknowledgement wait.
    public func negativelyAcknowledge() throws(NATSError) {
        try NATSError.check("natsMsg_Nak", natsMsg_Nak(message, nil))
    }
}
