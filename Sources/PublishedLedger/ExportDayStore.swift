import AttributionJoin
import JournalStore
import OfferTrackDomain
import SQLite

/// A journal's export days as `Publishing`'s exporter reads and publishes them (SPEC section 7): the published days
/// and the rows in force, the conversions in pages, and a day's files staged and named in short transactions
/// (`ExportStaging`). What the files hold is the publisher's to say; this is where they are stored.
public final class ExportDayStore {
    private let writer: JournalWriter

    /// Opens the journal at `journalPath` for publishing (its own connection, `synchronous=FULL`).
    public init(journalPath: String, busyTimeoutMilliseconds: Int32) throws {
        writer = try JournalWriter(
            path: journalPath,
            options: .init(
                durability: .full, busyTimeoutMilliseconds: busyTimeoutMilliseconds, maintainsDerivedTables: false))
    }

    /// What publishing a day depends on besides the records: the published days (each publication adds one).
    public struct PublishedMark: Equatable, Sendable {
        let count: Int64
        let latest: String?

        /// Read nothing (a published day needs no mark).
        static let none = PublishedMark(count: -1, latest: nil)

        static func read(on connection: Connection) throws -> PublishedMark {
            let statement = try connection.prepare("SELECT count(*), max(day) FROM published_days")
            defer { statement.reset() }
            _ = try statement.step()
            return PublishedMark(count: statement.int64(0), latest: statement.text(1))
        }
    }

    /// One snapshot of what an export of a day reads before the conversions.
    public struct Snapshot: Sendable {
        /// The day's files as first published, when it is published (then nothing else is read).
        public let published: (csv: [UInt8], manifest: [UInt8])?
        /// The published day's lines as stored (schema 14), when asked for; nil for a day published before.
        public let publishedLines: [ExportPlan.Line]?
        /// The published days when read, for `publish` to check that none was published since.
        public let mark: PublishedMark
        /// Every published day, in order.
        public let publishedDays: [String]
        /// The rows in force: for each published day, its rows by conversion id.
        public let inForce: [String: [ExactString: CommissionRow]]
    }

    /// Reads `day`'s files (and with `readingLines` its stored lines) when published, else the published days and the
    /// rows in force, from one snapshot.
    public func snapshot(of day: String, readingLines: Bool = false) throws -> Snapshot {
        let connection = try writer.currentConnection()
        return try connection.readTransaction {
            if let published = try PublishedDays.files(of: day, on: connection) {
                return Snapshot(
                    published: published,
                    publishedLines: readingLines ? try PublishedDays.lines(of: day, on: connection) : nil,
                    mark: .none, publishedDays: [], inForce: [:])
            }
            return Snapshot(
                published: nil, publishedLines: nil, mark: try PublishedMark.read(on: connection),
                publishedDays: try connection.allTexts("SELECT day FROM published_days ORDER BY day"),
                inForce: try PublishedDays.ledger(on: connection))
        }
    }

    /// Every conversion that converted in `range`, evaluated under `rules`, read in pages of `pageSize`, each from a
    /// short snapshot of its own (so that no reader keeps the daemon's WAL from being checkpointed); `restart` is
    /// called when the pages must be read again from the start.
    public func forEachConversion(
        range: ReportRange, rules: CommissionRules, pageSize: Int, _ body: (EvaluatedConversion) -> Void,
        restart: () -> Void
    ) throws {
        let connection = try writer.currentConnection()
        try ConversionSource.forEachInPages(
            connection, range: range, rules: rules, pageSize: pageSize, body, restart: restart)
    }

    /// Stages `day`'s `csv`, its `lines` and ledger `changes` in chunks of `limits`, then names them its publication
    /// with `manifest`, unless another export published anything since `mark` was read or deleted the staged run: false
    /// then (plan again).
    package func publish(
        day: String, csv: [UInt8], lines: [ExportPlan.Line], changes: [ExportPlan.LedgerChange], manifest: [UInt8],
        generatedAt: Int64,
        mark: PublishedMark, limits: ExportLimits,
        hooks: ExportStagingHooks
    ) throws -> Bool {
        let connection = try writer.currentConnection()
        let staging = try ExportStaging(
            day: day, startedAt: generatedAt, lines: lines.count, limits: limits, hooks: hooks, on: connection)
        do {
            try staging.stage(csv: csv, lines: lines, changes: changes, day: day)
        } catch is ExportStaging.AbandonedRun {
            return false
        }
        let published = try staging.publish(
            day: day, generatedAt: generatedAt, manifest: manifest,
            isCurrent: { try PublishedMark.read(on: connection) == mark })
        try ExportStaging.deleteAbandonedRuns(limits: limits, on: connection)
        return published
    }
}

extension Connection {
    /// The first column of every row of `sql`, as text.
    package func allTexts(_ sql: String) throws -> [String] {
        let statement = try prepare(sql)
        defer { statement.reset() }
        var values: [String] = []
        while try statement.step() { values.append(statement.text(0) ?? "") }
        return values
    }
}
