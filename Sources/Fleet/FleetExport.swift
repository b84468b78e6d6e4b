import JSON
import JournalStore
import OfferTrackDomain
import OutputFormats
import PublishedLedger
import Publishing
import WireFormat

/// The commission export over a fleet's central journals (SPEC section 10): day D published in each journal for
/// its own conversions (SPEC section 7), and one file whose rows are the union of theirs in section 7's order,
/// with one manifest for the whole.
///
/// The file is merged from the journals' rows (`ExportPlan.Line`), not from their CSV bytes: each journal stores a
/// published day's lines beside its CSV (schema 14), so rewriting a published day merges the same lines again and
/// gives the same file; the whole's `generatedAt`, `rulesSha256` and `currency` are those of the earliest journal's
/// first publication (so a rewrite with another rules file gives the same manifest too). Days published
/// before schema 14 are merged from their CSV read back (`merge`).
public enum FleetExport {
    /// Why a set of journals cannot be exported as one.
    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
    }

    /// Refuses an edge's journal (one that records a fleet but no partitions): it forwards its records to the
    /// stream and keeps no attribution, so a day or month published from it would pay nothing, or part of the fleet.
    public static func refuseEdgeJournals(_ readers: [ReadOnlyJournal]) throws {
        for reader in readers
        where try FleetIdentity.recorded(on: reader) != nil && FleetMembership.recorded(on: reader) == nil {
            throw Refusal(
                description: "\(reader.path) is an edge journal: it forwards its records to the stream and keeps no "
                    + "attribution; publish from the central journals (--db each)")
        }
    }

    /// Checks that `readers` cover every partition of one fleet exactly once; returns P.
    public static func checkCoverage(_ readers: [ReadOnlyJournal]) throws -> Int {
        try refuseEdgeJournals(readers)
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

    /// Checks the journals a payout statement is published from (SPEC 7.1): no edge journal, and several journals,
    /// or a central journal alone, must cover every partition of one fleet exactly once. A central journal alone
    /// (unless it holds them all) would store a statement of part of the fleet, which a later run over every
    /// journal would copy to the others.
    public static func checkPayoutCoverage(journalPaths: [String]) throws {
        let readers = try journalPaths.map { try ReadOnlyJournal(path: $0) }
        try refuseEdgeJournals(readers)
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
    /// `hooks` are tests' (none by default). Without `rules` only a day every journal published is exported.
    public static func export(
        journalPaths: [String], day: String, rules: RulesFile?, now: Int64,
        hooks: ExportStagingHooks = ExportStagingHooks()
    ) throws -> CommissionExporter.Files {
        let readers = try journalPaths.map { try ReadOnlyJournal(path: $0) }
        _ = try checkCoverage(readers)
        try checkCompletable(day, readers)
        var parts: [CommissionExporter.Files] = []
        for path in journalPaths {
            do {
                parts.append(
                    try CommissionExporter.export(
                        journalPath: path, day: day, rules: rules, now: now, readingLines: true, hooks: hooks))
            } catch let refusal as CommissionExporter.Refusal {
                throw refusal
            } catch let damaged as ExportLines.Unreadable {
                throw Refusal(
                    description: "\(path): its stored export lines of \(day) are damaged (\(damaged)): restore this "
                        + "journal from a backup of before the damage, then run the same export again")
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
        // Without rules every part is a published day's, whose own manifest gives the currency and rules' hash.
        return try merge(
            parts, journalPaths: journalPaths, day: day, currency: rules?.rules.currency ?? "",
            rulesSha256: rules?.sha256 ?? "")
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

    /// One file from several journals' files of the same day, merged from their rows rather than their CSV bytes:
    /// each journal's export lines (`Files.lines`: the plan's for a day it publishes now, the lines it stored at the
    /// day's publication otherwise), merged in SPEC order, written by the export's one CSV writer
    /// (`ExportPlan.csv(of:)`), the sums added from the lines' signed amounts with checked arithmetic. Stored lines
    /// must write exactly the CSV the journal's manifest hashes (what it first published), else the export is
    /// refused. Fallback: a day a journal published before schema 14 has no stored lines (its run stored its CSV
    /// only; the migration does not fill them, as the journal cannot read CSV), so its lines are read back from
    /// that CSV (`ExportPlan.lines(readingCSV:)`, which refuses a file it would not write back byte for byte).
    static func merge(
        _ parts: [CommissionExporter.Files], journalPaths: [String], day: String, currency: String,
        rulesSha256: String
    ) throws -> CommissionExporter.Files {
        var merged: [MergedLine] = []
        var commission: Int64 = 0
        var adjustment: Int64 = 0
        var first: PublishedManifest?
        for (part, files) in parts.enumerated() {
            let path = part < journalPaths.count ? journalPaths[part] : "journal \(part + 1)"
            let manifest = PublishedManifest(files.manifest)
            let lines: [ExportPlan.Line]
            if let stored = files.lines {
                lines = stored
                if files.republished, SHA256.hex(of: ExportPlan.csv(of: stored)) != manifest.sha256 {
                    throw Refusal(
                        description: "\(path): the lines stored for \(day) do not write the CSV its manifest hashes "
                            + "(sha256 \(manifest.sha256 ?? "absent")): the journal is damaged; "
                            + "restore it from its backup")
                }
            } else {
                do { lines = try ExportPlan.lines(readingCSV: files.csv) } catch {
                    throw Refusal(description: "\(path): its export file of \(day) is not SPEC 7's CSV: \(error)")
                }
            }
            merged.reserveCapacity(merged.count + lines.count)
            for (index, line) in lines.enumerated() {
                switch line.kind {
                case .commission: commission = try Money.sum(commission, line.signedAmount)
                case .adjustment: adjustment = try Money.sum(adjustment, line.signedAmount)
                }
                merged.append(MergedLine(line: line, part: part, index: index))
            }
            if let at = manifest.generatedAt, first?.generatedAt.map({ at < $0 }) ?? true {
                first = manifest
            }
        }
        merged.sort(by: MergedLine.precedes)
        let csv = ExportPlan.csv(of: merged.lazy.map(\.line))
        let manifest = ExportPlan.manifest(
            day: day, rows: merged.count, commissionMinor: commission, adjustmentMinor: adjustment, csv: csv,
            currency: first?.currency ?? currency, rulesSha256: first?.rulesSha256 ?? rulesSha256,
            generatedAt: first?.generatedAt ?? "")
        return CommissionExporter.Files(
            csv: csv, manifest: manifest, republished: parts.allSatisfy(\.republished),
            lines: merged.map(\.line))
    }

    /// One journal's export line, with where it came from.
    private struct MergedLine {
        let line: ExportPlan.Line
        let part: Int
        let index: Int

        /// SPEC order (`converted_at`, then `conversion_id` bytes), then each journal's own: a conversion lives in one
        /// journal, so keeping a journal's order among equal keys keeps a reversal before the row replacing it.
        static func precedes(_ lhs: MergedLine, _ rhs: MergedLine) -> Bool {
            let (left, right) = (lhs.line.row, rhs.line.row)
            if left.convertedAt != right.convertedAt { return left.convertedAt < right.convertedAt }
            if !left.conversionId.utf8.elementsEqual(right.conversionId.utf8) {
                return RecordOrder.idPrecedes(left.conversionId, right.conversionId)
            }
            return (lhs.part, lhs.index) < (rhs.part, rhs.index)
        }
    }
}
