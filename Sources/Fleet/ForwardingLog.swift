import AttributionJoin
import JournalStore

/// What an edge daemon forwards (SPEC section 10): the journal's records in `seq` order, the durable watermark
/// below which the stream has acknowledged every record (`meta` key `forward_acked_seq`), and which stream
/// acknowledged them (its creation time, `forward_stream_created`).
///
/// It reads and records through a `JournalFeed`, connections of its own (one to read, one to store the watermark in
/// a short transaction), so the forwarder never touches the writer's connection and the writer never waits on the
/// stream. One thread uses it at a time (the forwarder's), which is what makes it `Sendable`.
public final class ForwardingLog: @unchecked Sendable {
    /// One journaled record as the stream receives it.
    public typealias Entry = JournalFeed.Entry

    static let watermarkKey = JournalFeed.forwardedThroughKey
    static let streamCreatedKey = MetaKey<Int64>("forward_stream_created")
    static let journalIDKey = MetaKey<String>("forward_journal_id")

    private let feed: JournalFeed

    /// Opens the journal at `path` (which a daemon has created and migrated).
    public init(path: String) throws {
        feed = try JournalFeed(path: path)
    }

    /// Closes the journal's connections (the next call opens them again): the daemon's writer, closed after, is then
    /// the last connection, whose close checkpoints the journal and removes its WAL.
    public func close() {
        feed.close()
    }

    /// Up to `limit` records with `seq` greater than `after`, in `seq` order.
    public func entries(after seq: Int64, limit: Int) throws -> [Entry] {
        try feed.entries(after: seq, limit: limit)
    }

    /// The records with `seq` greater than `after` and at most `through`, in `seq` order.
    public func entries(after seq: Int64, through last: Int64) throws -> [Entry] {
        try feed.entries(after: seq, through: last)
    }

    /// The highest `seq` journaled (0 when empty).
    public func lastSeq() throws -> Int64 {
        try feed.lastSeq()
    }

    /// When the record after `seq` was received (for the lag in seconds); nil when there is none.
    public func receivedAt(after seq: Int64) throws -> Int64? {
        try feed.receivedAt(after: seq)
    }

    /// The stored watermark: every record with a `seq` up to it was acknowledged by the stream (0: none yet).
    public func watermark() throws -> Int64 {
        try Self.storedWatermark(feed.meta) ?? 0
    }

    /// How far forwarding is behind at `now`: the records journaled past the watermark and how long ago the
    /// first of them was received; nil when this journal was never forwarded (not an edge).
    public static func lag(of reader: ReadOnlyJournal, now: Int64) throws -> (
        through: Int64, records: Int64, seconds: Double
    )? {
        guard let through = try storedWatermark(reader.meta) else { return nil }
        let last = try reader.lastSeq()
        let seconds = try reader.receivedAt(after: through).map { Double(max(0, now - $0)) / 1000 } ?? 0
        return (through, max(0, last - through), seconds)
    }

    /// The watermark, or nil when the journal stores none (it never forwarded, or is not an edge's); a stored
    /// text that is not a number reads as 0.
    static func storedWatermark(_ meta: JournalMeta) throws -> Int64? {
        try meta.text(watermarkKey).map { Int64(metaText: $0) ?? 0 }
    }

    /// The watermark of the journal `reader`, or nil when it stores none.
    static func storedWatermark(of reader: ReadOnlyJournal) throws -> Int64? {
        try storedWatermark(reader.meta)
    }

    /// The name this journal's messages carry in their `Nats-Msg-Id` (`StreamBatch.messageID`): 16 random hex
    /// digits, stored in `meta` (`forward_journal_id`) the first time it is asked for and the same ever after.
    public func journalID() throws -> String {
        try feed.updatingMeta { meta in
            let random = String(UInt64.random(in: .min ... .max), radix: 16)
            try meta.setIfAbsent(Self.journalIDKey, to: String(repeating: "0", count: 16 - random.count) + random)
            return try meta.value(Self.journalIDKey) ?? ""
        }
    }

    /// Records what the forwarder reports about the stream (for `offertrack status`).
    public func record(_ report: StreamReport) throws {
        try feed.updatingMeta { try $0.set(StreamReport.key, to: report) }
    }

    /// Stores the watermark durably (one small transaction). `forward --from-seq N` stores N − 1 to forward
    /// again from N.
    public func setWatermark(_ seq: Int64) throws {
        try feed.updatingMeta { try $0.set(Self.watermarkKey, to: seq) }
    }

    /// When the stream that acknowledged the records below the watermark was created (UTC nanoseconds); nil
    /// when not yet recorded.
    public func streamCreated() throws -> Int64? {
        try feed.meta.value(Self.streamCreatedKey)
    }

    /// Records the stream's creation time with the watermark `seq`, in one transaction: forwarding to a stream
    /// created again starts over from `seq`.
    public func setStream(created: Int64, watermark seq: Int64) throws {
        try feed.updatingMeta { meta in
            try meta.set(Self.watermarkKey, to: seq)
            try meta.set(Self.streamCreatedKey, to: created)
        }
    }
}
