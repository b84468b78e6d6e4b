import AttributionJoin
import JournalStore
import OfferTrackDomain
import SQLite

/// A journal's payout months as `Publishing`'s payout publisher reads and stores them (SPEC 7.1): what publishing a
/// month depends on, the published export days' CSVs it adds up, and the month's files stored once.
public final class PayoutMonthStore {
    private let writer: JournalWriter

    /// Opens the journal at `journalPath` for publishing (its own connection, `synchronous=FULL`).
    public init(journalPath: String, busyTimeoutMilliseconds: Int32) throws {
        writer = try JournalWriter(
            path: journalPath,
            options: .init(
                durability: .full, busyTimeoutMilliseconds: busyTimeoutMilliseconds, maintainsDerivedTables: false))
    }

    /// What the journal holds that publishing a month depends on.
    public struct State: Sendable {
        /// The month's files as first published, when it is published.
        public var month: (csv: [UInt8], manifest: [UInt8])?
        /// The first and last published export days.
        public var firstDay: String?
        public var lastDay: String?
        /// The month's published export days, in order.
        public var monthDays: [String]
        /// The latest published month.
        public var latestMonth: String?
        /// The month before's published CSV (its balances are carried in).
        public var previous: [UInt8]?
    }

    /// Reads the journal's `State` for `month` from one snapshot.
    public func state(of month: PayoutMonth) throws -> State {
        let connection = try writer.currentConnection()
        return try connection.readTransaction {
            let days = try connection.allTexts("SELECT day FROM published_days ORDER BY day")
            var state = State(
                month: nil, firstDay: days.first, lastDay: days.last,
                monthDays: days.filter { month.contains(day: $0) }, latestMonth: nil, previous: nil)
            state.latestMonth = try connection.allTexts("SELECT max(month) FROM published_months").first
            if state.latestMonth?.isEmpty == true { state.latestMonth = nil }
            state.month = try Self.files(of: month.description, on: connection)
            state.previous = try month.previous.flatMap { try Self.files(of: $0.description, on: connection)?.csv }
            return state
        }
    }

    /// The CSV of every published export day of `month`, one day at a time in day order, from one snapshot.
    public func forEachExportCSV(of month: PayoutMonth, _ body: (String, [UInt8]) throws -> Void) throws {
        let connection = try writer.currentConnection()
        return try connection.readTransaction {
            try PublishedDays.forEachCSV(from: month.firstDay, through: month.lastDay, on: connection, body)
        }
    }

    /// Stores `csv` and `manifest` as `month`'s unless the journal already holds the month: returns the files it
    /// holds now, and whether they were there before.
    public func store(csv: [UInt8], manifest: [UInt8], month: PayoutMonth, generatedAt: Int64) throws
        -> (csv: [UInt8], manifest: [UInt8], stored: Bool)
    {
        let connection = try writer.currentConnection()
        return try connection.transaction {
            if let stored = try Self.files(of: month.description, on: connection) {
                return (stored.csv, stored.manifest, true)
            }
            let insert = try connection.prepare(
                "INSERT INTO published_months (month, generated_at, csv, manifest) VALUES (?1, ?2, ?3, ?4)")
            try insert.bind(month.description, at: 1)
            try insert.bind(generatedAt, at: 2)
            try insert.bindText(csv, at: 3)
            try insert.bindText(manifest, at: 4)
            try insert.run()
            return (csv, manifest, false)
        }
    }

    private static func files(of month: String, on connection: Connection) throws -> (csv: [UInt8], manifest: [UInt8])?
    {
        let statement = try connection.prepare("SELECT csv, manifest FROM published_months WHERE month = ?1")
        try statement.bind(month, at: 1)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return (statement.bytes(0), statement.bytes(1))
    }
}
