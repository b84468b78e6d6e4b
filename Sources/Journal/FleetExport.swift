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

    /// Checks that `readers` cover every partition of one fleet exactly once.
    public static func checkCoverage(_ readers: [JournalReader]) throws -> Int {
        var totals: Set<Int> = []
        var holder: [Int: String] = [:]
        for reader in readers {
            guard let membership = try FleetMembership.recorded(on: reader) else {
                throw Refusal(description: "\(reader.path) is not a central journal (it records no partitions)")
            }
            totals.insert(membership.total)
            for partition in membership.partitions {
                if let other = holder[partition] {
                    throw Refusal(description: "partition \(partition) is in both \(other) and \(reader.path)")
                }
                holder[partition] = reader.path
            }
        }
        guard totals.count == 1, let total = totals.first else {
            throw Refusal(description: "the journals belong to fleets of different sizes: P = \(totals.sorted())")
        }
        let missing = (0..<total).filter { holder[$0] == nil }
        guard missing.isEmpty else {
            throw Refusal(
                description: "no journal given holds partitions \(missing.map(String.init).joined(separator: ",")) "
                    + "of \(total): give every central journal")
        }
        return total
    }

    /// Exports `day` from every journal and merges the files.
    public static func export(
        journalPaths: [String], day: String, rules: RulesFile, now: Int64
    ) throws -> CommissionExporter.Files {
        let readers = try journalPaths.map { try JournalReader(path: $0) }
        _ = try checkCoverage(readers)
        // Published together or not at all: journals that disagree on what is published would publish D in
        // some and refuse it in others.
        let states = try readers.map { reader in
            (latest: try reader.lastPublishedDay(), hasDay: try reader.isPublished(day))
        }
        if let first = states.first, !states.allSatisfy({ $0.latest == first.latest && $0.hasDay == first.hasDay }) {
            throw Refusal(
                description: "the central journals disagree on the published days (latest: "
                    + states.map { $0.latest ?? "none" }.joined(separator: ", ") + ")")
        }
        let parts = try journalPaths.map {
            try CommissionExporter.export(journalPath: $0, day: day, rules: rules, now: now)
        }
        return merge(parts, day: day, currency: rules.rules.currency, rulesSha256: rules.sha256)
    }

    /// One file from several journals' files of the same day.
    static func merge(
        _ parts: [CommissionExporter.Files], day: String, currency: String, rulesSha256: String
    ) -> CommissionExporter.Files {
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
            let manifest = String(decoding: files.manifest, as: UTF8.self)
            commission += Self.number(after: "\"commissionMinor\":", in: manifest)
            adjustment += Self.number(after: "\"adjustmentMinor\":", in: manifest)
            if let at = Self.string(after: "\"generatedAt\":\"", in: manifest), generatedAt.map({ at < $0 }) ?? true {
                generatedAt = at
            }
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

    private static func number(after key: String, in text: String) -> Int64 {
        guard let rest = suffix(after: key, in: text) else { return 0 }
        return Int64(String(rest.prefix { $0 == "-" || $0.isNumber })) ?? 0
    }

    private static func string(after key: String, in text: String) -> String? {
        suffix(after: key, in: text).map { String($0.prefix { $0 != "\"" }) }
    }

    /// What follows the first occurrence of `key` in `text` (the manifests are our own one-line JSON).
    private static func suffix(after key: String, in text: String) -> Substring? {
        var index = text.startIndex
        while index < text.endIndex {
            if text[index...].hasPrefix(key) { return text[text.index(index, offsetBy: key.count)...] }
            index = text.index(after: index)
        }
        return nil
    }
}
