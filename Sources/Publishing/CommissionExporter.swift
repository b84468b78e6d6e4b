import OfferTrackDomain
import OutputFormats
import PublishedLedger
import WireFormat

/// Publishes export days (SPEC section 7) inside the journal (stored through `ExportDayStore`), so that a published day
/// is immutable and later changes become adjustments in the next day published.
public enum CommissionExporter {
    /// The files of one exported day.
    public struct Files: Sendable {
        public let csv: [UInt8]
        public let manifest: [UInt8]
        /// True when the day was published before: these are the bytes first published.
        public let republished: Bool
        /// The CSV's lines, in its order: the plan's for a day published now; for a day published before, the lines
        /// stored at its publication when the export was asked for them (`readingLines`), else nil (and nil for a
        /// day published before schema 14, which stored its CSV only).
        public let lines: [ExportPlan.Line]?

        package init(csv: [UInt8], manifest: [UInt8], republished: Bool, lines: [ExportPlan.Line]? = nil) {
            self.csv = csv
            self.manifest = manifest
            self.republished = republished
            self.lines = lines
        }
    }

    /// Why a day cannot be exported.
    public enum Refusal: Error, CustomStringConvertible {
        case earlierThanLatest(day: String, latest: String)
        case gap(day: String, firstMissing: String)
        case badDay(String)
        case notEnded(day: String)
        /// Money is never published from a rules file nobody gave (SPEC 6): only a published day is rewritten without.
        case rulesRequired(day: String)

        public var description: String {
            switch self {
            case .earlierThanLatest(let day, let latest):
                "\(day) was never published and is earlier than the latest published day \(latest); "
                    + "its conversions are reported through adjustments only"
            case .gap(let day, let firstMissing):
                "exporting \(day) would leave a gap: export \(firstMissing) first"
            case .badDay(let text): "\(text) is not a YYYY-MM-DD date"
            case .notEnded(let day): "\(day) has not ended yet (UTC): a day is exported once it is over"
            case .rulesRequired(let day):
                "--rules is required: \(day) is not published, and money is never published from rules nobody gave"
            }
        }
    }

    /// Exports `day` (`YYYY-MM-DD`): the stored files when it is published, else publishes it now. The day's rows and
    /// adjustments are computed from short read transactions (`plan`), so ingest goes on meanwhile. The publication is
    /// staged in short write transactions (`ExportDayStore.publish`), and made visible by a last small one that checks
    /// that no other export published anything since (computed again, should one have). With `readingLines`, a
    /// published day's `Files` carry its stored lines too (the fleet's export merges them). `hooks` are tests' (none by
    /// default). Without `rules` only a published day is exported (its stored files); any other is refused
    /// (`Refusal.rulesRequired`).
    public static func export(
        journalPath: String, day: String, rules: RulesFile?, now: Int64, busyTimeoutMilliseconds: Int32 = 30_000,
        readingLines: Bool = false, hooks: ExportStagingHooks = ExportStagingHooks()
    ) throws -> Files {
        try export(
            journalPath: journalPath, day: day, rules: rules, now: now,
            busyTimeoutMilliseconds: busyTimeoutMilliseconds, readingLines: readingLines,
            limits: ExportLimits(), hooks: hooks)
    }

    /// `export`, staging the publication in chunks of `limits`.
    package static func export(
        journalPath: String, day: String, rules: RulesFile?, now: Int64, busyTimeoutMilliseconds: Int32 = 30_000,
        readingLines: Bool = false, limits: ExportLimits, hooks: ExportStagingHooks = ExportStagingHooks()
    ) throws -> Files {
        guard let dayStart = Timestamp.parseDay(day) else { throw Refusal.badDay(day) }
        guard dayStart + Timestamp.millisecondsPerDay <= now else { throw Refusal.notEnded(day: day) }
        let store = try ExportDayStore(journalPath: journalPath, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        while true {
            let planned = try plan(
                day, dayStart: dayStart, rules: rules, now: now, pageSize: limits.conversionsPerRead,
                readingLines: readingLines, store: store)
            guard case .publish(let plan, let files, let mark) = planned else {
                guard case .published(let files) = planned else { continue }
                return files
            }
            // Another export that published in between changes the ledger this plan was made against.
            let published = try store.publish(
                day: day, csv: files.csv, lines: plan.lines, changes: plan.changes, manifest: files.manifest,
                generatedAt: now, mark: mark, limits: limits, hooks: hooks)
            if published { return files }
        }
    }

    /// What a read of the journal decided.
    private enum Planned {
        case published(Files)
        case publish(ExportPlan, Files, mark: ExportDayStore.PublishedMark)
    }

    /// Plans `day`: its stored files when published, else what publishing it now writes. The published days and
    /// the rows in force are read from one snapshot; the conversions in pages, each from a short snapshot of its
    /// own (`ExportDayStore.forEachConversion`), so that no reader keeps the daemon's WAL from being checkpointed
    /// for the seconds a busy day takes to read. A conversion read late is as if its records had arrived late:
    /// the next export adjusts whatever changed, against the rows this one published.
    private static func plan(
        _ day: String, dayStart: Int64, rules: RulesFile?, now: Int64, pageSize: Int, readingLines: Bool,
        store: ExportDayStore
    ) throws -> Planned {
        let snapshot = try store.snapshot(of: day, readingLines: readingLines)
        if let published = snapshot.published {
            return .published(
                Files(
                    csv: published.csv, manifest: published.manifest, republished: true,
                    lines: snapshot.publishedLines))
        }
        guard let rules else { throw Refusal.rulesRequired(day: day) }
        let publishedDays = snapshot.publishedDays
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
        try store.forEachConversion(range: range, rules: rules.rules, pageSize: pageSize) { evaluated in
            guard let qualifiesAt = evaluated.qualifiesAt,
                let row = CommissionRow(evaluated, currency: rules.rules.currency)
            else { return }
            current[Timestamp.formatDay(qualifiesAt), default: []].append(row)
        } restart: {
            current.removeAll()
        }
        let plan = ExportPlan(day: day, current: current, inForce: snapshot.inForce)
        let csv = plan.csv()
        let manifest = try plan.manifest(
            csv: csv, currency: rules.rules.currency, rulesSha256: rules.sha256, generatedAt: now)
        return .publish(
            plan, Files(csv: csv, manifest: manifest, republished: false, lines: plan.lines), mark: snapshot.mark)
    }
}

extension Int64 {
    /// `self - other`, stopping at the smallest value instead of overflowing.
    fileprivate func subtractingSaturated(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? .min : difference
    }
}
