import JSON
import Journal
import OfferTrackDomain
import OutputFormats
import Publishing
import WireFormat

/// The commission export over a fleet's central journals (SPEC section 10): day D published in each journal for
/// its own conversions (SPEC section 7), and one file whose rows are the union of theirs in section 7's order,
/// with one manifest for the whole.
///
/// Each journal keeps its own published bytes, so rewriting a published day merges the same bytes again and
/// gives the same file; the whole's `generatedAt` is the earliest journal's first publication.
public enum FleetExport {
    /// Why a set of journals cannot be exported as one.
    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
    }

    /// Checks that `readers` cover every partition of one fleet exactly once; returns P.
    public static func checkCoverage(_ readers: [ReadOnlyJournal]) throws -> Int {
        let memberships: [FleetMembership?]
        do { memberships = try FleetJournals.check(readers) } catch let refusal as FleetJournals.Refusal {
            throw Refusal(description: refusal.description)
        }
        var held: Set<Int> = []
        for (reader, membership) in zip(readers, memberships) {
            guard let membership else {
                throw Refusal(description: "\(reader.path) is not a central journal (it records no partitions)")
            }
            held.formUnion(membership.partitions)
        }
        guard let total = memberships.first??.total else {
            throw Refusal(description: "no journal given")
        }
        let missing = (0..<total).filter { !held.contains($0) }
        guard missing.isEmpty else {
            throw Refusal(
                description: "no journal given holds partitions \(missing.map(String.init).joined(separator: ",")) "
                    + "of \(total): give every central journal")
        }
        return total
    }

    /// Checks the journals a payout statement is published from (SPEC 7.1): several journals, or a central journal
    /// alone, must cover every partition of one fleet exactly once. A central journal alone (unless it holds them
    /// all) would store a statement of part of the fleet, which a later run over every journal would copy to the
    /// others.
    public static func checkPayoutCoverage(journalPaths: [String]) throws {
        let readers = try journalPaths.map { try ReadOnlyJournal(path: $0) }
        let central = try readers.contains { try FleetMembership.recorded(on: $0) != nil }
        if readers.count > 1 || central { _ = try checkCoverage(readers) }
    }

    /// Why a fleet export stopped after some journals published the day (one was busy, a disk failed): a rerun
    /// completes it.
    public struct Incomplete: Error, CustomStringConvertible {
        public let description: String
    }

    /// Exports `day` from every journal and merges the files. Journals that already hold `day` (a run that
    /// stopped after publishing it in some) contribute the rows they published; the others publish it now.
    /// `hooks` are tests' (none by default).
    public static func export(
        journalPaths: [String], day: String, rules: RulesFile, now: Int64,
        hooks: ExportStagingHooks = ExportStagingHooks()
    ) throws -> CommissionExporter.Files {
        let readers = try journalPaths.map { try ReadOnlyJournal(path: $0) }
        _ = try checkCoverage(readers)
        try checkCompletable(day, readers)
        var parts: [CommissionExporter.Files] = []
        for path in journalPaths {
            do {
                parts.append(
                    try CommissionExporter.export(journalPath: path, day: day, rules: rules, now: now, hooks: hooks))
            } catch let refusal as CommissionExporter.Refusal {
                throw refusal
            } catch {
                let done = journalPaths.prefix(parts.count)
                throw Incomplete(
                    description: "exporting \(day) from \(path): \(error); "
                        + (done.isEmpty
                            ? "nothing was published"
                            : "\(done.joined(separator: ", ")) published it and keep it")
                        + ": run the same export again (every --db) to complete the day")
            }
        }
        return try merge(parts, day: day, currency: rules.rules.currency, rulesSha256: rules.sha256)
    }

    /// Published together or not at all: a day some journals hold is completed in the others only when every
    /// journal published the same days before it and none a later one (what a stopped fleet export leaves);
    /// any other difference comes from exporting a journal alone and is refused before anything is published.
    static func checkCompletable(_ day: String, _ readers: [ReadOnlyJournal]) throws {
        let histories = try readers.map { try $0.publishedDays() }
        guard !histories.allSatisfy({ $0.contains(day) }) else { return }
        let before = histories.map { $0.filter { $0 < day } }
        let later = histories.contains { $0.contains { $0 > day } }
        guard later || Set(before.map(\.count)).count > 1 || Set(before.map(\.last)).count > 1 else { return }
        let each = zip(readers, histories).map { reader, days in
            "\(reader.path): \(days.count) days, latest \(days.last ?? "none")"
        }
        throw Refusal(
            description: "the central journals disagree on the published days (\(each.joined(separator: "; "))), "
                + "so \(day) cannot be published in all of them alike. A fleet export stopped midway leaves only "
                + "its day missing in some journals, which exporting that day again with every --db completes; "
                + "this difference comes from exporting a journal alone: restore the journals that went ahead "
                + "from their backups of before, then export each day with every --db")
    }

    /// One file from several journals' files of the same day: each journal's CSV read as SPEC 7's rows (the
    /// presentation's CSV reader), the rows merged in SPEC order and written again, the sums added from the rows'
    /// amounts with checked arithmetic.
    static func merge(
        _ parts: [CommissionExporter.Files], day: String, currency: String, rulesSha256: String
    ) throws -> CommissionExporter.Files {
        // Every row: (converted_at, conversion_id) is its SPEC order key, and a conversion lives in one journal, so
        // keeping each journal's own order among equal keys keeps a reversal before the row replacing it.
        var rows: [MergedRow] = []
        var commission: Int64 = 0
        var adjustment: Int64 = 0
        var generatedAt: String?
        for (part, files) in parts.enumerated() {
            var index = 0
            try CSVReader.forEachRecord(in: files.csv) { record in
                defer { index += 1 }
                guard index > 0 else { return }  // the header
                let row = try MergedRow(record, part: part, index: index)
                switch row.fields[MergedRow.kind] {
                case ExportPlan.Line.Kind.commission.rawValue: commission = try Money.sum(commission, row.amount)
                default: adjustment = try Money.sum(adjustment, row.amount)
                }
                rows.append(row)
            }
            if let at = Manifest(files.manifest).generatedAt, generatedAt.map({ at < $0 }) ?? true {
                generatedAt = at
            }
        }
        rows.sort(by: MergedRow.precedes)
        var csv: [UInt8] = []
        CSVField.append(line: ExportPlan.header, to: &csv)
        for row in rows { CSVField.append(line: row.fields, to: &csv) }
        let manifest = ExportPlan.manifest(
            day: day, rows: rows.count, commissionMinor: commission, adjustmentMinor: adjustment, csv: csv,
            currency: currency, rulesSha256: rulesSha256, generatedAt: generatedAt ?? "")
        return CommissionExporter.Files(
            csv: csv, manifest: manifest, republished: parts.allSatisfy(\.republished))
    }

    /// One row of a journal's export file, with where it came from.
    private struct MergedRow {
        static let kind = ExportPlan.header.firstIndex(of: "kind") ?? 0
        static let conversionID = ExportPlan.header.firstIndex(of: "conversion_id") ?? 1
        static let convertedAt = ExportPlan.header.firstIndex(of: "converted_at") ?? 2
        static let amountMinor = ExportPlan.header.firstIndex(of: "amount_minor") ?? 9

        let fields: [String]
        let amount: Int64
        let part: Int
        let index: Int

        init(_ record: CSVRecord, part: Int, index: Int) throws {
            guard record.count == ExportPlan.header.count, let amount = record.int64(Self.amountMinor) else {
                throw Refusal(
                    description: "line \(record.line) of a journal's export file is not a row of SPEC 7's CSV")
            }
            fields = (0..<record.count).map(record.text)
            self.amount = amount
            self.part = part
            self.index = index
        }

        /// SPEC order (`converted_at`, which sorts as text, then `conversion_id` bytes), then each journal's own.
        static func precedes(_ lhs: MergedRow, _ rhs: MergedRow) -> Bool {
            let (left, right) = (lhs.fields, rhs.fields)
            if left[convertedAt] != right[convertedAt] { return left[convertedAt] < right[convertedAt] }
            if left[conversionID] != right[conversionID] {
                return left[conversionID].utf8.lexicographicallyPrecedes(right[conversionID].utf8)
            }
            return (lhs.part, lhs.index) < (rhs.part, rhs.index)
        }
    }

    /// What the whole's manifest takes from one journal's (SPEC 7): when it was first published.
    private struct Manifest {
        var generatedAt: String?

        init(_ bytes: [UInt8]) {
            guard case .object(let object)? = try? JSONParser.parse(bytes) else { return }
            if case .string(let text)? = object["generatedAt"] { generatedAt = text }
        }
    }
}
