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
    /// The day's rows and adjustments are computed in a read transaction, so ingest goes on meanwhile; the write
    /// lock is taken only to check that no other export published anything since and to store the publication
    /// (computed again, should one have).
    public static func export(
        journalPath: String, day: String, rules: RulesFile, now: Int64, busyTimeoutMilliseconds: Int32 = 30_000
    ) throws -> Files {
        guard let dayStart = Timestamp.parseDay(day) else { throw Refusal.badDay(day) }
        guard dayStart + Timestamp.millisecondsPerDay <= now else { throw Refusal.notEnded(day: day) }
        let writer = try JournalWriter(
            path: journalPath, durability: .full, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
            maintainsDerivedTables: false)
        return try writer.withConnection { connection in
            while true {
                let planned = try connection.readTransaction {
                    try plan(day, dayStart: dayStart, rules: rules, now: now, on: connection)
                }
                guard case .publish(let publication, let seen) = planned else {
                    guard case .published(let files) = planned else { continue }
                    return files
                }
                // Another export that published in between changes the ledger this plan was made against.
                let stored = try connection.transaction {
                    guard try PublishedState.read(on: connection) == seen else { return false }
                    try record(
                        publication.plan, csv: publication.files.csv, manifest: publication.files.manifest,
                        generatedAt: now, on: connection)
                    return true
                }
                if stored { return publication.files }
            }
        }
    }

    /// What a read of the journal decided.
    private enum Planned {
        case published(Files)
        case publish(Publication, seen: PublishedState)
    }

    private struct Publication {
        let plan: ExportPlan
        let files: Files
    }

    /// What an export depends on besides the records: the published days (each publication adds one).
    private struct PublishedState: Equatable {
        let count: Int64
        let latest: String?

        static func read(on connection: Connection) throws -> PublishedState {
            let statement = try connection.prepare("SELECT count(*), max(day) FROM published_days")
            defer { statement.reset() }
            _ = try statement.step()
            return PublishedState(count: statement.int64(0), latest: statement.text(1))
        }
    }

    /// Plans `day` from one snapshot: its stored files when published, else what publishing it now writes.
    private static func plan(
        _ day: String, dayStart: Int64, rules: RulesFile, now: Int64, on connection: Connection
    ) throws -> Planned {
        if let published = try publishedFiles(day, on: connection) { return .published(published) }
        let seen = try PublishedState.read(on: connection)
        let publishedDays = try connection.allTexts("SELECT day FROM published_days ORDER BY day")
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
        try ConversionSource.forEach(connection, range: range, rules: rules.rules) { evaluated in
            guard let qualifiesAt = evaluated.qualifiesAt,
                let row = CommissionRow(evaluated, currency: rules.rules.currency)
            else { return }
            current[Timestamp.formatDay(qualifiesAt), default: []].append(row)
        }
        let plan = ExportPlan(day: day, current: current, inForce: try ledger(on: connection))
        let csv = plan.csv()
        let manifest = try plan.manifest(
            csv: csv, currency: rules.rules.currency, rulesSha256: rules.sha256, generatedAt: now)
        return .publish(
            Publication(plan: plan, files: Files(csv: csv, manifest: manifest, republished: false)), seen: seen)
    }

    private static func publishedFiles(_ day: String, on connection: Connection) throws -> Files? {
        let statement = try connection.prepare("SELECT csv, manifest FROM published_days WHERE day = ?1")
        try statement.bind(day, at: 1)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return Files(csv: statement.bytes(0), manifest: statement.bytes(1), republished: true)
    }

    private static func ledger(on connection: Connection) throws -> [String: [ExactString: CommissionRow]] {
        var inForce: [String: [ExactString: CommissionRow]] = [:]
        for day in try connection.allTexts("SELECT day FROM published_days") { inForce[day] = [:] }
        let statement = try connection.prepare(
            """
            SELECT original_date, conversion_id, converted_at, offer_id, presented_at, affiliate_token,
                campaign_token, message_identifier, item_id, amount_minor, currency FROM export_ledger
            """)
        defer { statement.reset() }
        while try statement.step() {
            let s = statement
            let row = CommissionRow(
                conversionId: s.text(1) ?? "", convertedAt: s.int64(2), offerId: s.text(3) ?? "",
                presentedAt: s.int64(4), affiliateToken: s.text(5) ?? "", campaignToken: s.text(6),
                messageIdentifier: s.text(7) ?? "", itemID: s.text(8), amountMinor: s.int64(9),
                currency: s.text(10) ?? "")
            inForce[s.text(0) ?? "", default: [:]][ExactString(row.conversionId)] = row
        }
        return inForce
    }

    /// Stores the published files and the rows now in force: the day's rows, and each adjusted conversion.
    private static func record(
        _ plan: ExportPlan, csv: [UInt8], manifest: [UInt8], generatedAt: Int64, on connection: Connection
    ) throws {
        let publish = try connection.prepare(
            "INSERT INTO published_days (day, generated_at, csv, manifest) VALUES (?1, ?2, ?3, ?4)")
        try publish.bind(plan.day, at: 1)
        try publish.bind(generatedAt, at: 2)
        try publish.bindText(csv, at: 3)
        try publish.bindText(manifest, at: 4)
        try publish.run()
        let delete = try connection.prepare(
            "DELETE FROM export_ledger WHERE original_date = ?1 AND conversion_id = ?2")
        let insert = try connection.prepare(
            """
            INSERT INTO export_ledger (original_date, conversion_id, converted_at, offer_id, presented_at,
                affiliate_token, campaign_token, message_identifier, item_id, amount_minor, currency)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
            """)
        for change in plan.changes {
            if change.day != plan.day {
                try delete.bind(change.day, at: 1)
                try delete.bind(change.conversionId, at: 2)
                try delete.run()
            }
            guard let row = change.row else { continue }
            try insert.bind(change.day, at: 1)
            try insert.bind(row.conversionId, at: 2)
            try insert.bind(row.convertedAt, at: 3)
            try insert.bind(row.offerId, at: 4)
            try insert.bind(row.presentedAt, at: 5)
            try insert.bind(row.affiliateToken, at: 6)
            try insert.bind(row.campaignToken, at: 7)
            try insert.bind(row.messageIdentifier, at: 8)
            try insert.bind(row.itemID, at: 9)
            try insert.bind(row.amountMinor, at: 10)
            try insert.bind(row.currency, at: 11)
            try insert.run()
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
