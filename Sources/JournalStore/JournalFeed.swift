import SQLite

/// A journal read in `seq` order on connections of its own (one to read, one to write `meta` in short
/// transactions), beside whatever else has it open: what an edge's forwarder reads and records (`ForwardingLog` in
/// `Fleet`). One thread uses it at a time, which is what makes it `Sendable`.
///
/// `close()` closes both connections: SQLite checkpoints the journal and removes its WAL when the last connection
/// to it closes, so a daemon closes the feed before its writer.
public final class JournalFeed: @unchecked Sendable {
    /// An edge's watermark in `meta`: the stream has acknowledged every record up to this `seq`. Sealing never
    /// removes a record above it (SPEC 12: an edge keeps what it has not forwarded).
    package static let forwardedThroughKey = MetaKey<Int64>("forward_acked_seq")

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
        public var keptPartition: Int?

        /// A record as read from the journal.
        public init(
            seq: Int64, id: String, user: String, line: [UInt8], receivedAt: Int64, keptPartition: Int? = nil
        ) {
            self.seq = seq
            self.id = id
            self.user = user
            self.line = line
            self.receivedAt = receivedAt
            self.keptPartition = keptPartition
        }
    }

    private let path: String
    private var openReader: Connection?
    private var openWriter: Connection?

    /// Opens the journal at `path` (which a daemon has created and migrated).
    public init(path: String) throws {
        self.path = path
        openReader = try Self.open(path, .readOnly)
        openWriter = try Self.open(path, .readWriteCreate)
    }

    private static func open(_ path: String, _ mode: Connection.Mode) throws -> Connection {
        let connection = try Connection(path: path, mode: mode)
        connection.setBusyTimeout(milliseconds: 5000)
        return connection
    }

    /// Closes both connections (opened again by the next call that needs one).
    public func close() {
        openReader = nil
        openWriter = nil
    }

    private var reader: Connection {
        get throws {
            if let openReader { return openReader }
            let opened = try Self.open(path, .readOnly)
            openReader = opened
            return opened
        }
    }

    private var writer: Connection {
        get throws {
            if let openWriter { return openWriter }
            let opened = try Self.open(path, .readWriteCreate)
            openWriter = opened
            return opened
        }
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

    /// When the record after `seq` was received; nil when there is none.
    public func receivedAt(after seq: Int64) throws -> Int64? {
        try Self.receivedAt(after: seq, on: reader)
    }

    static func receivedAt(after seq: Int64, on connection: Connection) throws -> Int64? {
        let statement = try connection.prepare(
            static: "SELECT received_at FROM records WHERE seq > ?1 ORDER BY seq LIMIT 1")
        try statement.bind(seq, at: 1)
        defer { statement.reset() }
        return try statement.step() ? statement.int64(0) : nil
    }

    /// The journal's `meta`, read on the reading connection.
    public var meta: JournalMeta {
        get throws { JournalMeta(try reader) }
    }

    /// Runs `body` on the journal's `meta` in one small write transaction on the writing connection.
    public func updatingMeta<T>(_ body: (JournalMeta) throws -> T) throws -> T {
        let writer = try writer
        return try writer.transaction { try body(JournalMeta(writer)) }
    }
}

extension ReadOnlyJournal {
    /// When the record after `seq` was received; nil when there is none.
    public func receivedAt(after seq: Int64) throws -> Int64? {
        try JournalFeed.receivedAt(after: seq, on: connection)
    }

    /// The records with `seq` greater than `after` and at most `through`, `limit` at most, in `seq` order.
    public func lines(after seq: Int64, through last: Int64, limit: Int) throws -> [(
        seq: Int64, id: String, line: [UInt8]
    )] {
        let page = try connection.prepare(
            "SELECT seq, id, line FROM records WHERE seq > ?1 AND seq <= ?2 ORDER BY seq LIMIT ?3")
        try page.bind(seq, at: 1)
        try page.bind(last, at: 2)
        try page.bind(Int64(limit), at: 3)
        defer { page.reset() }
        var lines: [(seq: Int64, id: String, line: [UInt8])] = []
        while try page.step() { lines.append((page.int64(0), page.text(1) ?? "", page.bytes(2))) }
        return lines
    }

    /// The line of the record `id`; nil when the journal has none.
    public func line(ofID id: String) throws -> [UInt8]? {
        let lookup = try connection.prepare("SELECT line FROM records WHERE id = ?1")
        try lookup.bind(id, at: 1)
        defer { lookup.reset() }
        return try lookup.step() ? lookup.bytes(0) : nil
    }

    /// Runs `body` with every journal of `journals` in a read transaction of its own, begun before `body` and
    /// ended after it: what `body` reads from each is one snapshot.
    public static func reading<T>(_ journals: [ReadOnlyJournal], _ body: () throws -> T) throws -> T {
        defer { for journal in journals { journal.connection.rollbackIfActive() } }
        for journal in journals { try journal.connection.execute("BEGIN") }
        return try body()
    }
}
