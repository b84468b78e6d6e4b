import OfferTrackDomain
import OfferTrackPresentation
import SQLite
import WireFormat

/// Publishes export days (SPEC section 7) inside the journal, so that a published day is immutable and later
/// changes become adjustments in the next day published.
public enum CommissionExporter {
    /// The files of one exported day.
    public struct Files: Sendable {
        public let csv: [UInt8]
        public let manifest: [UInt8]
        /// True when the day was published before: these are the bytes first published.
        public let republished: Bool

        package init(csv: [UInt8], manifest: [UInt8], republished: Bool) {
            self.csv = csv
            self.manifest = manifest
            self.republished = republished
        }
    }

    /// Why a day cannot be exported.
    public enum Refusal: Error, CustomStringConvertible {
        case earlierThanLatest(day: String, latest: String)
        case gap(day: String, firstMissing: String)
        case badDay(String)
        case notEnded(day: String)

        public var description: String {
            switch self {
            case .earlierThanLatest(let day, let latest):
                "\(day) was never published and is earlier than the latest published day \(latest); "
                    + "its conversions are reported through adjustments only"
            case .gap(let day, let firstMissing):
                "exporting \(day) would leave a gap: export \(firstMissing) first"
            case .badDay(let text): "\(text) is not a YYYY-MM-DD date"
            case .notEnded(let day): "\(day) has not ended yet (UTC): a day is exported once it is over"
            }
        }
    }

    /// Exports `day` (`YYYY-MM-DD`): the stored files when it is published, else publishes it now.
    ///
    /// The day's rows and adjustments are computed from short read transactions (`plan`), so ingest goes on
    /// meanwhile. The publication is staged in short write transactions (`ExportStaging`), and made visible by a
    /// last small one that checks that no other export published anything since (computed again, should one
    /// have).
    public static func export(
        journalPath: String, day: String, rules: RulesFile, now: Int64, busyTimeoutMilliseconds: Int32 = 30_000
    ) throws -> Files {
        try export(
            journalPath: journalPath, day: day, rules: rules, now: now,
            busyTimeoutMilliseconds: busyTimeoutMilliseconds,
            limits: ExportLimits())
    }

    /// `export`, staging the publication in chunks of `limits`.
    package static func export(
        journalPath: String, day: String, rules: RulesFile, now: Int64, busyTimeoutMilliseconds: Int32 = 30_000,
        limits: ExportLimits
    ) throws -> Files {
        guard let dayStart = Timestamp.parseDay(day) else { throw Refusal.badDay(day) }
        guard dayStart + Timestamp.millisecondsPerDay <= now else { throw Refusal.notEnded(day: day) }
        let writer = try JournalWriter(
            path: journalPath, durability: .full, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
            maintainsDerivedTables: false)
        return try writer.withConnection { connection in
            while true {
                let planned = try plan(
                    day, dayStart: dayStart, rules: rules, now: now, pageSize: limits.conversionsPerRead,
                    on: connection)
                guard case .publish(let publication, let seen) = planned else {
                    guard case .published(let files) = planned else { continue }
                    return files
                }
                let staging = try ExportStaging(day: day, startedAt: now, limits: limits, on: connection)
                do {
                    try staging.stage(csv: publication.files.csv, changes: publication.plan.changes, day: day)
                } catch is ExportStaging.AbandonedRun {
                    continue
                }
                // Another export that published in between changes the ledger this plan was made against.
                let published = try staging.publish(
                    day: day, generatedAt: now, manifest: publication.files.manifest,
                    isCurrent: { try PublishedState.read(on: connection) == seen })
                try ExportStaging.deleteAbandonedRuns(limits: limits, on: connection)
                if published { return publication.files }
            }
        }
    }

    /// What a read of the journal decided.
    private enum Planned {
        case published(Files)
        case publish(Publication, seen: PublishedState)
    }

    /// The rows in force: for each published day, its rows by conversion id.
    private typealias Ledger = [String: [ExactString: CommissionRow]]

    private struct Publication {
        let plan: ExportPlan
        let files: Files
    }

    /// What an export depends on besides the records: the published days (each publication adds one).
    private struct PublishedState: Equatable {
        let count: Int64
        let latest: String?

        /// Read nothing (a published day needs no state).
        static let none = PublishedState(count: -1, latest: nil)

        static func read(on connection: Connection) throws -> PublishedState {
            let statement = try connection.prepare("SELECT count(*), max(day) FROM published_days")
            defer { statement.reset() }
            _ = try statement.step()
            return PublishedState(count: statement.int64(0), latest: statement.text(1))
        }
    }

    /// Plans `day`: its stored files when published, else what publishing it now writes. The published days and
    /// the rows in force are read from one snapshot; the conversions in pages, each from a short snapshot of its
    /// own (`ConversionSource.forEachInPages`), so that no reader keeps the daemon's WAL from being checkpointed
    /// for the seconds a busy day takes to read. A conversion read late is as if its records had arrived late:
    /// the next export adjusts whatever changed, against the rows this one published.
    private static func plan(
        _ day: String, dayStart: Int64, rules: RulesFile, now: Int64, pageSize: Int, on connection: Connection
    ) throws -> Planned {
        let read = try connection.readTransaction { () -> (Files?, PublishedState, [String], Ledger) in
            if let published = try publishedFiles(day, on: connection) { return (published, .none, [], [:]) }
            let seen = try PublishedState.read(on: connection)
            let publishedDays = try connection.allTexts("SELECT day FROM published_days ORDER BY day")
            return (nil, seen, publishedDays, try PublishedDays.ledger(on: connection))
        }
        let (published, seen, publishedDays, inForce) = read
        if let published { return .published(published) }
        if let latest = publishedDays.last, let latestStart = Timestamp.parseDay(latest) {
            if dayStart < latestStart { throw Refusal.earlierThanLatest(day: day, latest: latest) }
            if dayStart > latestStart + Timestamp.millisecondsPerDay {
                throw Refusal.gap(
                    day: day, firstMissing: Timestamp.formatDay(latestStart + Timestamp.millisecondsPerDay))
            }
        }
        let firstStart = publishedDays.first.flatMap(Timestamp.parseDay) ?? dayStart
        // Rows fall on the day their conversion qualifies (rule 4.6: `converted_at + H`).
        let holding = rules.rules.settings.holdingMs
        let range = ReportRange(
            since: firstStart.subtractingSaturated(holding),
            until: (dayStart + Timestamp.millisecondsPerDay).subtractingSaturated(holding))
        var current: [String: [CommissionRow]] = [:]
        try ConversionSource.forEachInPages(connection, range: range, rules: rules.rules, pageSize: pageSize) {
            evaluated in
            guard let qualifiesAt = evaluated.qualifiesAt,
                let row = CommissionRow(evaluated, currency: rules.rules.currency)
            else { return }
            current[Timestamp.formatDay(qualifiesAt), default: []].append(row)
        } restart: {
            current.removeAll()
        }
        let plan = ExportPlan(day: day, current: current, inForce: inForce)
        let csv = plan.csv()
        let manifest = try plan.manifest(
            csv: csv, currency: rules.rules.currency, rulesSha256: rules.sha256, generatedAt: now)
        return .publish(
            Publication(plan: plan, files: Files(csv: csv, manifest: manifest, republished: false)), seen: seen)
    }

    private static func publishedFiles(_ day: String, on connection: Connection) throws -> Files? {
        try PublishedDays.files(of: day, on: connection).map {
            Files(csv: $0.csv, manifest: $0.manifest, republished: true)
        }
    }
}

extension Int64 {
    /// `self - other`, stopping at the smallest value instead of overflowing.
    fileprivate func subtractingSaturated(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? .min : difference
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

extension JournalWriter {
    /// Runs `body` with the writer's connection (for maintenance commands that need their own transactions).
    func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        try body(try currentConnection())
    }
}
