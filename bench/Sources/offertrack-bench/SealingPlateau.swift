import AttributionJoin
import Foundation
import JournalStore
import OfferTrackDomain
import Posix
import SQLite
import Simulator
import TestSupport
import WireFormat

/// Section 11, the plateau (issue 47 item 5): `SealedJournalPlateauTests` at the bench's scale. A steady flow of
/// new and returning users (`SteadyFlowSimulator`: `usersPerCohort` new users every `cohortDays` days, each back
/// two to five times) over 4R days, W 48 h, F 24 h, R 6 days; each day's records journaled in process, then
/// `offertrack seal --as-of` the next night at 01:00Z (the CLI, timed). Bytes in use (pages less free pages)
/// after R, 2R and 4R days; a raw record's bytes (after R days, before any seal removed a record); the bytes kept
/// per record sealed from 2R to 4R days, and where they go (each table's growth, `dbstat`; the kept entries by kind).
/// Targets: 4R against 2R ≤ 1.2×, kept per sealed record ≤ 5 % of a raw one.
struct SealingPlateau {
    /// The plateau test's rules: K = 3 days, R = 6.
    static let rules = """
        {"currency":"EUR","attributionWindowHours":48,"eligibilityFreshnessHours":24,"retentionDays":6,
         "rules":[{"affiliateToken":"*","amountMinor":100}]}
        """
    static let retentionDays = 6

    let context: SectionContext
    let scale: SealingScale
    let cli: String

    func run() throws {
        let rulesFile = try RulesFile(bytes: Array(Self.rules.utf8))
        let rulesPath = context.scratch.file("plateau-rules.json")
        try Self.rules.write(toFile: rulesPath, atomically: true, encoding: .utf8)
        let r = Self.retentionDays
        let flow = SteadyFlowSimulator(usersPerCohort: scale.usersPerCohort, cohortDays: scale.cohortDays, days: 4 * r)
        context.progress(
            "sealing: a steady flow of \(Format.grouped(Double(scale.usersPerCohort))) new users every "
                + "\(scale.cohortDays) days over \(4 * r) days, sealed nightly")
        let path = context.newDatabase()
        let writer = try JournalWriter(
            path: path, durability: .normal, schema: .migrate, settings: rulesFile.rules.settings)
        var journaled = 0
        var journaledAfterR = 0
        var removed = 0
        var bytesAfter: [Int: Int64] = [:]
        var tablesAfter: [Int: [String: Int64]] = [:]
        var keptKinds = ""
        var sealedRecords: [Int: Int] = [:]
        var sealMilliseconds: [Double] = []
        var daySizes: [Int] = []
        for (day, records) in flow.recordsByDay().enumerated() {
            daySizes.append(records.count)
            for batch in stride(from: 0, to: records.count, by: 8192) {
                let submissions = records[batch..<min(records.count, batch + 8192)].map {
                    Submission(record: $0.record, line: Array($0.line.utf8))
                }
                journaled += try writer.append(submissions, receivedAt: 0).count { $0.isJournaled }
            }
            let night = flow.start + Int64(day + 1) * Timestamp.millisecondsPerDay + 3_600_000
            let seal = try QueryCost.milliseconds(
                cli: cli, ["seal", "--db", path, "--rules", rulesPath, "--as-of", Timestamp.format(night)], runs: 1)
            if seal.output.hasPrefix("sealed ") { sealMilliseconds.append(seal.ms) }
            removed += SealingSection.removedRecords(seal.output)
            if day + 1 == r { journaledAfterR = journaled }
            if day + 1 == r || day + 1 == 2 * r || day + 1 == 4 * r {
                let connection = try Connection(path: path, mode: .readOnly)
                bytesAfter[day + 1] = try Self.bytesInUse(connection)
                tablesAfter[day + 1] = try Self.bytesByTable(connection)
                if day + 1 > r {
                    guard let state = try SealState.read(on: connection),
                        let unsealed = try connection.scalarInt(
                            "SELECT count(*) FROM records WHERE ts >= \(state.sealedBefore)")
                    else { throw BenchFailure("the plateau's journal was not sealed after \(day + 1) days") }
                    sealedRecords[day + 1] = journaled - Int(unsealed)
                    if day + 1 == 4 * r { keptKinds = try Self.keptEntries(connection, before: state.sealedBefore) }
                }
            }
        }
        guard let early = bytesAfter[r], let middle = bytesAfter[2 * r], let late = bytesAfter[4 * r],
            let sealedMiddle = sealedRecords[2 * r], let sealedLate = sealedRecords[4 * r], journaledAfterR > 0
        else { throw BenchFailure("the plateau's figures are missing") }
        let raw = Double(early) / Double(journaledAfterR)
        let kept = Double(late - middle) / Double(max(1, sealedLate - sealedMiddle))
        let growth = Double(late) / Double(middle)
        let share = kept / raw
        let perDay = Double(journaled) / Double(max(1, daySizes.count))
        let sorted = sealMilliseconds.sorted()
        context.add(
            ResultRow(
                section: SealingSection.section,
                name: "bytes in use after 4R days against after 2R days, a steady flow sealed nightly "
                    + "(\(Format.grouped(Double(scale.usersPerCohort))) new users every \(scale.cohortDays) days, "
                    + "about \(Format.grouped(perDay)) records a day; W 48 h, F 24 h, R \(r) days)",
                value: Format.ratio(growth),
                comparison: "\(Format.grouped(Double(early))) / \(Format.grouped(Double(middle))) / "
                    + "\(Format.grouped(Double(late))) bytes after R / 2R / 4R days; "
                    + "\(Format.grouped(Double(journaled))) records journaled, \(Format.grouped(Double(removed))) "
                    + "removed; target ≤ 1.2×: \(growth <= 1.2 ? "met" : "**missed**")"))
        context.add(
            ResultRow(
                section: SealingSection.section,
                name: "bytes kept per sealed record (from 2R to 4R days) against a raw record's (after R days, "
                    + "before any removal)",
                value: "\(Format.fixed(share * 100, 1)) %",
                comparison: "\(Format.fixed(kept, 0)) against \(Format.fixed(raw, 0)) bytes; "
                    + "\(Format.grouped(Double(sealedLate - sealedMiddle))) records sealed from 2R to 4R; "
                    + "target ≤ 5 %: \(share <= 0.05 ? "met" : "**missed**"); each night's `offertrack seal` "
                    + "(\(sorted.count) that sealed a day) median \(Format.fixed(sorted.isEmpty ? 0 : sorted[sorted.count / 2], 0)) ms, "
                    + "max \(Format.fixed(sorted.last ?? 0, 0)) ms"))
        let grown = Self.growth(from: tablesAfter[2 * r] ?? [:], to: tablesAfter[4 * r] ?? [:])
        context.add(
            ResultRow(
                section: SealingSection.section,
                name: "where the bytes kept per sealed record go (from 2R to 4R days, by table and index)",
                value: "\(Format.fixed(kept, 0)) bytes",
                comparison: grown.prefix(6).map {
                    "`\($0.name)` \(Format.fixed(Double($0.bytes) / Double(max(1, sealedLate - sealedMiddle)), 1))"
                }
                .joined(separator: ", ") + "; kept index entries after 4R days, by kind: \(keptKinds)"))
        context.scratch.removeDatabase(path)
    }

    /// The bytes of the pages each table and index uses (`dbstat`).
    static func bytesByTable(_ connection: Connection) throws -> [String: Int64] {
        let select = try connection.prepare("SELECT name, sum(pgsize) FROM dbstat GROUP BY name")
        var bytes: [String: Int64] = [:]
        while try select.step() { bytes[select.text(0) ?? "?"] = select.int64(1) }
        return bytes
    }

    /// The index entries of sealed days (what sealing kept), per kind: "kind: count × mean body bytes".
    static func keptEntries(_ connection: Connection, before sealedBefore: Int64) throws -> String {
        let select = try connection.prepare(
            """
            SELECT kind, count(*), sum(length(body)) FROM (
                SELECT kind, body FROM by_user WHERE ts < ?1 UNION ALL SELECT kind, body FROM by_user_recent WHERE ts < ?1
                UNION ALL SELECT kind, body FROM by_user_sealed)
            GROUP BY kind
            """)
        try select.bind(sealedBefore, at: 1)
        var kinds: [String] = []
        while try select.step() {
            let count = Double(select.int64(1))
            kinds.append(
                "\(select.int64(0)): \(Format.grouped(count)) × \(Format.fixed(Double(select.int64(2)) / count, 0))")
        }
        return kinds.joined(separator: ", ")
    }

    /// How many bytes each table and index grew by, the largest first.
    static func growth(from before: [String: Int64], to after: [String: Int64]) -> [(name: String, bytes: Int64)] {
        after.map { (name: $0.key, bytes: $0.value - (before[$0.key] ?? 0)) }.sorted { $0.bytes > $1.bytes }
    }

    /// The journal's pages in use (free pages aside), in bytes.
    static func bytesInUse(_ connection: Connection) throws -> Int64 {
        guard let pages = try connection.scalarInt("PRAGMA page_count"),
            let free = try connection.scalarInt("PRAGMA freelist_count"),
            let size = try connection.scalarInt("PRAGMA page_size")
        else { throw BenchFailure("no page counts") }
        return Int64((pages - free) * size)
    }
}
