import OfferTrackDomain
import OfferTrackPresentation
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
    public static func checkCoverage(_ readers: [JournalReader]) throws -> Int {
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

    /// Why a fleet export stopped after some journals published the day (one was busy, a disk failed): a rerun
    /// completes it.
    public struct Incomplete: Error, CustomStringConvertible {
        public let description: String
    }

    /// Exports `day` from every journal and merges the files. Journals that already hold `day` (a run that
    /// stopped after publishing it in some) contribute the rows they published; the others publish it now.
    public static func export(
        journalPaths: [String], day: String, rules: RulesFile, now: Int64
    ) throws -> CommissionExporter.Files {
        let readers = try journalPaths.map { try JournalReader(path: $0) }
        _ = try checkCoverage(readers)
        try checkCompletable(day, readers)
        var parts: [CommissionExporter.Files] = []
        for path in journalPaths {
            do {
                parts.append(try CommissionExporter.export(journalPath: path, day: day, rules: rules, now: now))
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
    static func checkCompletable(_ day: String, _ readers: [JournalReader]) throws {
        let histories = try readers.map { try $0.connection.allTexts("SELECT day FROM published_days ORDER BY day") }
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

    /// One file from several journals' files of the same day.
    static func merge(
        _ parts: [CommissionExporter.Files], day: String, currency: String, rulesSha256: String
    ) throws(MoneyOverflow) -> CommissionExporter.Files {
        // Every row: (converted_at, conversion_id) is its SPEC order key (those fields are never quoted), and a
        // conversion lives in one journal, so keeping each journal's own order among equal keys keeps a reversal
        // before the row replacing it.
        var rows: [(convertedAt: Substring, id: Substring, part: Int, index: Int, line: Substring)] = []
        var commission: Int64 = 0
        var adjustment: Int64 = 0
        var generatedAt: String?
        for (part, files) in parts.enumerated() {
            let text = String(decoding: files.csv, as: UTF8.self)
            for (index, line) in text.split(separator: "\n").dropFirst().enumerated() {
                let fields = line.split(separator: ",", maxSplits: 3, omittingEmptySubsequences: false)
                guard fields.count >= 3 else { continue }
                rows.append((fields[2], fields[1], part, index, line))
            }
            let manifest = Manifest(files.manifest)
            commission = try Money.sum(commission, manifest.commissionMinor)
            adjustment = try Money.sum(adjustment, manifest.adjustmentMinor)
            if let at = manifest.generatedAt, generatedAt.map({ at < $0 }) ?? true { generatedAt = at }
        }
        rows.sort { lhs, rhs in
            if lhs.convertedAt != rhs.convertedAt { return lhs.convertedAt < rhs.convertedAt }
            if lhs.id != rhs.id { return lhs.id.utf8.lexicographicallyPrecedes(rhs.id.utf8) }
            return (lhs.part, lhs.index) < (rhs.part, rhs.index)
        }
        var csv = Array((ExportPlan.header.joined(separator: ",") + "\n").utf8)
        for row in rows {
            csv += Array(row.line.utf8)
            csv.append(UInt8(ascii: "\n"))
        }
        let manifest = ExportPlan.manifest(
            day: day, rows: rows.count, commissionMinor: commission, adjustmentMinor: adjustment, csv: csv,
            currency: currency, rulesSha256: rulesSha256, generatedAt: generatedAt ?? "")
        return CommissionExporter.Files(
            csv: csv, manifest: manifest, republished: parts.allSatisfy(\.republished))
    }

    /// The fields of one journal's manifest (SPEC 7) the whole's sums and dates are made of.
    private struct Manifest {
        var commissionMinor: Int64 = 0
        var adjustmentMinor: Int64 = 0
        var generatedAt: String?

        init(_ bytes: [UInt8]) {
            guard case .object(let object)? = try? JSONParser.parse(bytes) else { return }
            if case .number(let number)? = object["commissionMinor"] { commissionMinor = number.int64Value ?? 0 }
            if case .number(let number)? = object["adjustmentMinor"] { adjustmentMinor = number.int64Value ?? 0 }
            if case .string(let text)? = object["generatedAt"] { generatedAt = text }
        }
    }
}
