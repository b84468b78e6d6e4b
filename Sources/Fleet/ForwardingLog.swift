import Journal
import SQLite

/// What an edge daemon forwards (SPEC section 10): the journal's records in `seq` order, the durable watermark
/// below which the stream has acknowledged every record (`meta` key `forward_acked_seq`), and which stream
/// acknowledged them (its creation time, `forward_stream_created`).
///
/// It has connections of its own (one to read, one to store the watermark in a short transaction), so the
/// forwarder never touches the writer's connection and the writer never waits on the stream. One thread uses
/// it at a time (the forwarder's), which is what makes it `Sendable`.
public final class ForwardingLog: @unchecked Sendable {
    /// One journaled record as the stream receives it.
    public struct Entry: Sendable {
        public let seq: Int64
        public let id: String
        public let user: String
        /// The record's line, verbatim.
        public let line: [UInt8]
        /// When the daemon received it (UTC epoch milliseconds).
        public let receivedAt: Int64
        /// The partition of the user it had before an erasure renamed it (SPEC 11); nil when not renamed.
        public var keptPartition: Int? = nil
    }

    static let watermarkKey = "forward_acked_seq"
    static let streamCreatedKey = "forward_stream_created"
    static let journalIDKey = "forward_journal_id"

    private let reader: Connection
    private let writer: Connection

    /// Opens the journal at `path` (which a daemon has created and migrated).
    public init(path: String) throws {
        reader = try Connection(path: path, mode: .readOnly)
        reader.setBusyTimeout(milliseconds: 5000)
        writer = try Connection(path: path, mode: .readWriteCreate)
        writer.setBusyTimeout(milliseconds: 5000)
    }

    /// Up to `limit` records with `seq` greater than `after`, in `seq` order.
    public func entries(after seq: Int64, limit: Int) throws -> [Entry] {
        let statement = try reader.prepare(
            static: """
                SELECT seq, id, user, line, received_at, kept_partition FROM records WHERE seq > ?1 ORDER BY seq LIMIT ?2
                """)
        try statement.bind(seq, at: 1)
        try statement.bind(Int64(limit), at: 2)
        return try Self.entries(statement)
    }

    /// The records with `seq` greater than `after` and at most `through`, in `seq` order.
    public func entries(after seq: Int64, through last: Int64) throws -> [Entry] {
        let statement = try reader.prepare(
            static: """
                SELECT seq, id, user, line, received_at, kept_partition FROM records WHERE seq > ?1 AND seq <= ?2
                ORDER BY seq
                """)
        try statement.bind(seq, at: 1)
        try statement.bind(last, at: 2)
        return try Self.entries(statement)
    }

    private static func entries(_ statement: Statement) throws -> [Entry] {
        defer { statement.reset() }
        var entries: [Entry] = []
        while try statement.step() {
            entries.append(
                Entry(
                    seq: statement.int64(0), id: statement.text(1) ?? "", user: statement.text(2) ?? "",
                    line: statement.bytes(3), receivedAt: statement.int64(4),
                    keptPartition: statement.isNull(5) ? nil : Int(statement.int64(5))))
        }
        return entries
    }

    /// The highest `seq` journaled (0 when empty).
    public func lastSeq() throws -> Int64 {
        try reader.scalarInt("SELECT coalesce(max(seq), 0) FROM records") ?? 0
    }

    /// When the record after `seq` was received (for the lag in seconds); nil when there is none.
    public func receivedAt(after seq: Int64) throws -> Int64? {
        let statement = try reader.prepare(
            static: "SELECT received_at FROM records WHERE seq > ?1 ORDER BY seq LIMIT 1")
        try statement.bind(seq, at: 1)
        defer { statement.reset() }
        return try statement.step() ? statement.int64(0) : nil
    }

    /// The stored watermark: every record with a `seq` up to it was acknowledged by the stream (0: none yet).
    public func watermark() throws -> Int64 {
        try Self.watermark(on: reader)
    }

    /// How far forwarding is behind at `now`: the records journaled past the watermark and how long ago the
    /// first of them was received; nil when this journal was never forwarded (not an edge).
    public static func lag(of reader: ReadOnlyJournal, now: Int64) throws -> (
        through: Int64, records: Int64, seconds: Double
    )? {
        let connection = reader.connection
        let statement = try connection.prepare(static: "SELECT 1 FROM meta WHERE key = ?1")
        try statement.bind(watermarkKey, at: 1)
        let present = try statement.step()
        statement.reset()
        guard present else { return nil }
        let through = try watermark(on: connection)
        let last = try connection.scalarInt("SELECT coalesce(max(seq), 0) FROM records") ?? 0
        let oldest = try connection.prepare(
            static: "SELECT received_at FROM records WHERE seq > ?1 ORDER BY seq LIMIT 1")
        try oldest.bind(through, at: 1)
        defer { oldest.reset() }
        let seconds = try oldest.step() ? Double(max(0, now - oldest.int64(0))) / 1000 : 0
        return (through, max(0, last - through), seconds)
    }

    /// The watermark, or nil when the journal stores none (it never forwarded, or is not an edge's).
    static func storedWatermark(on connection: Connection) throws -> Int64? {
        let statement = try connection.prepare(static: "SELECT value FROM meta WHERE key = ?1")
        try statement.bind(watermarkKey, at: 1)
        defer { statement.reset() }
        return try statement.step() ? Int64(statement.text(0) ?? "") ?? 0 : nil
    }

    static func watermark(on connection: Connection) throws -> Int64 {
        try storedWatermark(on: connection) ?? 0
    }

    /// The name this journal's messages carry in their `Nats-Msg-Id` (`StreamBatch.messageID`): 16 random hex
    /// digits, stored in `meta` (`forward_journal_id`) the first time it is asked for and the same ever after.
    public func journalID() throws -> String {
        try writer.transaction {
            let random = String(UInt64.random(in: .min ... .max), radix: 16)
            try storeMeta(
                [(Self.journalIDKey, String(repeating: "0", count: 16 - random.count) + random)], on: writer,
                replacing: false)
            let statement = try writer.prepare(static: "SELECT value FROM meta WHERE key = ?1")
            try statement.bind(Self.journalIDKey, at: 1)
            defer { statement.reset() }
            guard try statement.step(), let id = statement.text(0) else { return "" }
            return id
        }
    }

    /// Records what the forwarder reports about the stream (for `offertrack status`).
    public func record(_ report: StreamReport) throws {
        try writer.transaction { try storeMeta([report.entry], on: writer, replacing: true) }
    }

    /// Stores the watermark durably (one small transaction). `forward --from-seq N` stores N − 1 to forward
    /// again from N.
    public func setWatermark(_ seq: Int64) throws {
        try writer.transaction {
            let statement = try writer.prepare(
                static: "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2")
            try statement.bind(Self.watermarkKey, at: 1)
            try statement.bind(String(seq), at: 2)
            try statement.run()
        }
    }

    /// When the stream that acknowledged the records below the watermark was created (UTC nanoseconds); nil
    /// when not yet recorded.
    public func streamCreated() throws -> Int64? {
        let statement = try reader.prepare(static: "SELECT value FROM meta WHERE key = ?1")
        try statement.bind(Self.streamCreatedKey, at: 1)
        defer { statement.reset() }
        return try statement.step() ? Int64(statement.text(0) ?? "") : nil
    }

    /// Records the stream's creation time with the watermark `seq`, in one transaction: forwarding to a stream
    /// created again starts over from `seq`.
    public func setStream(created: Int64, watermark seq: Int64) throws {
        try writer.transaction {
            try storeMeta(
                [(Self.watermarkKey, String(seq)), (Self.streamCreatedKey, String(created))], on: writer,
                replacing: true)
        }
    }
}
