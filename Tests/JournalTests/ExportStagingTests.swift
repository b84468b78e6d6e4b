import AttributionJoin
import Foundation
import OfferTrackDomain
import PublishedLedger
import Publishing
import SQLite
import Simulator
import Testing
import WireFormat

/// Schema 9: a publication staged in short transactions reads back whole, and rows published before schema 9
/// (`export_ledger`) stay in force until a later publication replaces or withdraws them.
@Suite struct ExportStagingTests {
    /// Rewrites the journal's publications as schema 8 stored them: the CSV in `published_days`, the rows in force
    /// in `export_ledger`, no runs.
    static func makeLegacy(_ path: String) throws {
        let connection = try Connection(path: path, mode: .readWrite)
        try connection.transaction {
            try connection.execute(
                """
                INSERT INTO export_ledger SELECT original_date, conversion_id, converted_at, offer_id, presented_at,
                    affiliate_token, campaign_token, message_identifier, item_id, amount_minor, currency
                    FROM ledger_entries WHERE removed = 0;
                UPDATE published_days SET csv = (SELECT group_concat(bytes, '') FROM
                    (SELECT bytes FROM export_parts WHERE run = published_days.run ORDER BY part)), run = NULL;
                DELETE FROM ledger_entries; DELETE FROM export_parts; DELETE FROM export_lines;
                DELETE FROM export_runs;
                """)
        }
    }

    @Test func legacyRowsStayInForceUntilALaterPublicationReplacesOrWithdrawsThem() throws {
        let directory = "/tmp/export-staging-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let staged = "\(directory)/staged.db"
        let legacy = "\(directory)/legacy.db"
        let writers = [try ExportFixtures.journal(at: staged), try ExportFixtures.journal(at: legacy)]
        let first = try ExportFixtures.rules(500, 700)
        let second = try ExportFixtures.rules(450, 900)
        var files: [[[UInt8]]] = [[], []]
        for (index, path) in [staged, legacy].enumerated() {
            let published = try CommissionExporter.export(
                journalPath: path, day: ExportFixtures.day(0), rules: first, now: ExportFixtures.later,
                limits: ExportFixtures.small)
            files[index].append(published.csv)
        }
        #expect(files[0][0] == files[1][0], "the same day exported from the same records differs")
        let connection = try Connection(path: staged, mode: .readOnly)
        let parts = try connection.scalarInt("SELECT count(*) FROM export_parts") ?? 0
        let entries = try connection.scalarInt("SELECT count(*) FROM ledger_entries") ?? 0
        #expect(parts == Int64((files[0][0].count + 99) / 100) && entries > 20, "\(parts) parts, \(entries) entries")
        try Self.makeLegacy(legacy)

        // Void three paid conversions (withdrawn rows) and change the amounts (every other row replaced).
        let paid = String(decoding: files[0][0], as: UTF8.self).split(separator: "\n").dropFirst().prefix(3)
        let voided = paid.map { String($0.split(separator: ",")[1]) }
        #expect(voided.count == 3)
        let users = try voided.map { id in
            try #require(
                try connection.scalarText("SELECT user FROM records WHERE id = '\(id)'"), "conversion \(id)")
        }
        let reviewedAt = Timestamp.format(WorkloadSimulator.defaultStart + Timestamp.millisecondsPerDay + 1000)
        let reviews = zip(voided, users).enumerated().map { number, pair in
            #"{"type":"review","id":"rv-\#(number)","ts":"\#(reviewedAt)","user":"\#(pair.1)","conversion":"\#(pair.0)","decision":"void","reason":"refund"}"#
        }
        let releasedAt = Timestamp.format(WorkloadSimulator.defaultStart + 2 * Timestamp.millisecondsPerDay + 1000)
        let release =
            #"{"type":"review","id":"rv-release","ts":"\#(releasedAt)","user":"\#(users[0])","conversion":"\#(voided[0])","decision":"release"}"#
        for (index, path) in [staged, legacy].enumerated() {
            _ = try writers[index].append(ExportFixtures.submissions(reviews), receivedAt: 0)
            files[index].append(
                try CommissionExporter.export(
                    journalPath: path, day: ExportFixtures.day(1), rules: second, now: ExportFixtures.later + 1,
                    limits: ExportFixtures.small
                ).csv)
            // Back to the first rules, one void released: every row replaced again, on top of the last run's.
            _ = try writers[index].append(ExportFixtures.submissions([release]), receivedAt: 0)
            files[index].append(
                try CommissionExporter.export(
                    journalPath: path, day: ExportFixtures.day(2), rules: first, now: ExportFixtures.later + 2,
                    limits: ExportFixtures.small
                ).csv)
        }
        for day in 1...2 {
            let text = String(decoding: files[0][day], as: UTF8.self)
            let legacyText = String(decoding: files[1][day], as: UTF8.self)
            #expect(text == legacyText, "day \(day) differs after schema 8's ledger")
            #expect(text.split(separator: "\n").count > 40, "day \(day) adjusts too little:\n\(text)")
        }
        // The voided rows are withdrawn on day 1 (a reversal and no new row), the released one comes back on day 2.
        let dayOne = String(decoding: files[0][1], as: UTF8.self).split(separator: "\n")
        for id in voided {
            #expect(dayOne.filter { $0.contains(",\(id),") }.count == 1, "\(id) on day 1")
        }
        let dayTwo = String(decoding: files[0][2], as: UTF8.self).split(separator: "\n")
        #expect(dayTwo.filter { $0.contains(",\(voided[0]),") }.count == 1, "the released conversion on day 2")
        #expect(dayTwo.filter { $0.contains(",\(voided[1]),") }.isEmpty, "a voided conversion on day 2")
        // Published days read back as first published, from parts and from the old column alike.
        for (index, path) in [staged, legacy].enumerated() {
            for day in 0...2 {
                let again = try CommissionExporter.export(
                    journalPath: path, day: ExportFixtures.day(day), rules: second, now: ExportFixtures.later + 9)
                #expect(again.republished, "day \(day) of \(path)")
                #expect(again.csv == files[index][day], "day \(day) of \(path) reads back otherwise")
            }
        }
    }

    /// The plan reads conversions in pages of short read transactions: pages of 1, 5 and 7 conversions give the
    /// bytes of one page, and so does a journal whose derived tables follow other windows than the rules (read
    /// again in one transaction, from the records).
    @Test func conversionsReadInPagesGiveTheSameDay() throws {
        let directory = "/tmp/export-pages-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let original = "\(directory)/original.db"
        _ = try ExportFixtures.journal(at: original)
        for rules in [
            try ExportFixtures.rules(500, 700), try ExportFixtures.rules(500, 700, windowHours: 6, holdingHours: 3),
        ] {
            var days: [String] = []
            for (index, pageSize) in [1_000_000, 1, 5, 7].enumerated() {
                let path = "\(directory)/\(rules.sha256.prefix(8))-\(index).db"
                try FileManager.default.copyItem(atPath: original, toPath: path)
                let files = try CommissionExporter.export(
                    journalPath: path, day: ExportFixtures.day(0), rules: rules, now: ExportFixtures.later,
                    limits: ExportLimits(conversionsPerRead: pageSize))
                days.append(String(decoding: files.csv, as: UTF8.self))
            }
            #expect(days[0].split(separator: "\n").count > 20, "too few rows:\n\(days[0])")
            for (index, day) in days.enumerated().dropFirst() {
                #expect(day == days[0], "pages of \([1_000_000, 1, 5, 7][index]) differ")
            }
        }
    }
}
