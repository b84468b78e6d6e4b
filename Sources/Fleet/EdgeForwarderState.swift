extension EdgeForwarder {
    /// How far forwarding has come.
    public struct Progress: Sendable, Equatable {
        /// Every record with a `seq` up to this was acknowledged by the stream.
        public var acknowledgedThrough: Int64
        /// Records journaled and not yet acknowledged.
        public var lagRecords: Int64
        /// Failed publishes since start (each followed by a resend from the watermark).
        public var failures: Int
        /// Records published and not yet acknowledged by the stream, now.
        public var inFlight: Int
        /// Messages the stream acknowledged since start, and the records they carried.
        public var messages: Int
        public var messageRecords: Int
    }

    /// A message published (or about to be) and not yet acknowledged.
    struct InFlight: Sendable {
        let firstSeq: Int64
        let records: Int
        /// The read of the journal it was formed from (the first and last `seq` read): to form it again.
        let read: ClosedRange<Int64>
    }

    struct State: Sendable {
        /// Every record up to this `seq` is in a message published or in flight.
        var sentThrough: Int64 = 0
        /// Not yet acknowledged: message id → its first `seq` and records.
        var inFlight: [String: InFlight] = [:]
        /// The records the messages in flight carry.
        var inFlightRecords = 0
        var messages = 0
        var messageRecords = 0
        var failed = false
        /// After a failure: the messages in flight are to be published again before anything else.
        var resend = false
        var failures = 0
        var stopped = false
        var lagRecords: Int64 = 0
        /// Erasures sent as they were received (`ErasureOriginals`), by `seq`: forgotten once acknowledged.
        var sentOriginals: [Int64: String] = [:]
        /// The last `seq` of an erasure without its original that the log named (each is named once).
        var warnedThrough: Int64 = 0
        var acknowledgedThrough: Int64 = 0
        /// When the stream last answered, or when records went in flight after none were (monotonic ms).
        var lastAnswerAt: Int64 = 0

        /// The first `seq` of the oldest message in flight: every record below it is acknowledged.
        var oldestInFlight: Int64? { inFlight.values.lazy.map(\.firstSeq).min() }

        mutating func add(_ id: String, _ batch: StreamBatch, read: ClosedRange<Int64>) {
            if inFlight.updateValue(InFlight(firstSeq: batch.firstSeq, records: batch.records, read: read), forKey: id)
                == nil
            {
                inFlightRecords += batch.records
            }
        }
    }
}
