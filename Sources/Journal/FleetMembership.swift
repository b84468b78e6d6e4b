import SQLite

/// Which partitions of a fleet a central journal holds (SPEC section 10), recorded in `meta` when it first
/// consumes and checked at every start after.
public struct FleetMembership: Sendable, Equatable, CustomStringConvertible {
    /// The partitions consumed into this journal, ascending.
    public let partitions: [Int]
    /// P, the fleet's number of partitions.
    public let total: Int

    public init(partitions: [Int], total: Int) {
        self.partitions = Array(Set(partitions)).sorted()
        self.total = total
    }

    public var description: String { "partitions \(partitions.map(String.init).joined(separator: ",")) of \(total)" }

    static let partitionsKey = "fleet_partitions"
    static let totalKey = "fleet_partitions_total"

    /// Why a journal refuses the partitions it was started with.
    public struct Mismatch: Error, CustomStringConvertible {
        public let recorded: FleetMembership
        public let requested: FleetMembership
        public var description: String {
            "this journal holds \(recorded) and was started with \(requested): every partition is consumed by "
                + "exactly one central journal, and P is fixed for the fleet's life"
        }
    }

    /// The membership recorded in the journal, if any.
    public static func recorded(on reader: JournalReader) throws -> FleetMembership? {
        try read(reader.connection)
    }

    static func read(_ connection: Connection) throws -> FleetMembership? {
        let statement = try connection.prepare("SELECT key, value FROM meta WHERE key IN (?1, ?2)")
        try statement.bind(partitionsKey, at: 1)
        try statement.bind(totalKey, at: 2)
        defer { statement.reset() }
        var values: [String: String] = [:]
        while try statement.step() { values[statement.text(0) ?? ""] = statement.text(1) ?? "" }
        guard let list = values[partitionsKey], let total = values[totalKey].flatMap({ Int($0) }) else { return nil }
        return FleetMembership(partitions: list.split(separator: ",").compactMap { Int($0) }, total: total)
    }
}

extension JournalWriter {
    /// Records `membership` on a journal that has none, or checks that it is the one recorded.
    public func claim(_ membership: FleetMembership) throws {
        let connection = try currentConnection()
        try connection.transaction {
            if let recorded = try FleetMembership.read(connection) {
                guard recorded == membership else {
                    throw FleetMembership.Mismatch(recorded: recorded, requested: membership)
                }
                return
            }
            let store = try connection.prepare("INSERT INTO meta (key, value) VALUES (?1, ?2)")
            for (key, value) in [
                (FleetMembership.partitionsKey, membership.partitions.map(String.init).joined(separator: ",")),
                (FleetMembership.totalKey, String(membership.total)),
            ] {
                try store.bind(key, at: 1)
                try store.bind(value, at: 2)
                try store.run()
            }
        }
    }
}

/// A central journal's consuming lag, as its daemon last recorded it (for `offertrack status`).
public struct ConsumeLag: Sendable, Equatable {
    /// Messages in the stream for this journal's partitions, not yet committed here.
    public let records: UInt64
    /// How old the newest consumed message was while messages were pending (seconds).
    public let seconds: Double
    /// When it was recorded (UTC epoch milliseconds).
    public let recordedAt: Int64

    public init(records: UInt64, seconds: Double, recordedAt: Int64) {
        self.records = records
        self.seconds = seconds
        self.recordedAt = recordedAt
    }

    static let key = "fleet_consume_lag"

    /// The lag last recorded in the journal, if it is a central one.
    public static func recorded(on reader: JournalReader) throws -> ConsumeLag? {
        let statement = try reader.connection.prepare("SELECT value FROM meta WHERE key = ?1")
        try statement.bind(key, at: 1)
        defer { statement.reset() }
        guard try statement.step(), let text = statement.text(0) else { return nil }
        let parts = text.split(separator: " ")
        guard parts.count == 3, let records = UInt64(parts[0]), let seconds = Double(parts[1]),
            let at = Int64(parts[2])
        else { return nil }
        return ConsumeLag(records: records, seconds: seconds, recordedAt: at)
    }
}

extension JournalWriter {
    /// Records the consuming lag (one small transaction on the writer's connection).
    public func record(_ lag: ConsumeLag) throws {
        let connection = try currentConnection()
        try connection.transaction {
            let store = try connection.prepare(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2")
            try store.bind(ConsumeLag.key, at: 1)
            try store.bind("\(lag.records) \(lag.seconds) \(lag.recordedAt)", at: 2)
            try store.run()
        }
    }
}
