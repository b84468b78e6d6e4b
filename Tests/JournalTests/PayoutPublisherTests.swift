import AttributionJoin
import Foundation
import JournalStore
import OfferTrackDomain
import OutputFormats
import PublishedLedger
import Publishing
import SQLite
import Simulator
import TestSupport
import Testing
import WireFormat

/// Payout months published from a journal's published export days (SPEC 7.1): the conservation law over random
/// days, immutability, and the refusals.
@Suite struct PayoutPublisherTests {
    let path = "/tmp/payout-test-\(UInt32.random(in: 0...UInt32.max)).db"

    static func month(_ text: String) throws -> PayoutMonth { try #require(PayoutMonth(text)) }

    static func rules(minimum: Int64) throws -> RulesFile {
        try RulesFile(bytes: Array(#"{"currency":"USD","payoutMinimumMinor":\#(minimum),"rules":[]}"#.utf8))
    }

    /// The statement's lines as (pair, columns 2...7).
    static func lines(_ csv: [UInt8]) throws -> [PayoutPair: [Int64]] {
        var lines: [PayoutPair: [Int64]] = [:]
        var header = true
        try CSVReader.forEachRecord(in: csv) { record in
            if header {
                header = false
                return
            }
            lines[PayoutPair(affiliateToken: record.text(0), currency: record.text(1))] = (2..<8).map {
                record.int64($0) ?? .min
            }
        }
        return lines
    }

    @Test func payableSumsPlusTheLastCarriedEqualEveryRowOfThePublishedMonths() throws {
        defer { removeJournal() }
        var generator = SeededGenerator.announced("payout conservation")
        // Four months of days, the first starting mid-month; random rows, adjustments and negative amounts.
        let days = PublishedDaysFixture.days(from: "2026-10-17", through: "2027-01-31")
        var rowsByMonth: [String: [(pair: PayoutPair, amountMinor: Int64)]] = [:]
        var files: [(day: String, csv: [UInt8])] = []
        for day in days {
            let count = Int.random(in: 0...12, using: &generator)
            let made = PublishedDaysFixture.exportCSV(
                day: day, rows: count, affiliates: ["aff1", "aff,2", "Zed", "e\u{301}"], currencies: ["USD", "EUR"],
                using: &generator)
            files.append((day, made.csv))
            rowsByMonth[String(day.prefix(7)), default: []] += made.amounts
        }
        try PublishedDaysFixture.publish(files, in: path)
        var paid: [PayoutPair: Int64] = [:]
        var expected: [PayoutPair: Int64] = [:]
        var lastCarried: [PayoutPair: Int64] = [:]
        for month in ["2026-10", "2026-11", "2026-12", "2027-01"] {
            let minimum = [0, 500, 3000, 20_000][Int.random(in: 0..<4, using: &generator)]
            let published = try PayoutPublisher.publish(
                journalPaths: [path], month: try Self.month(month), rules: try Self.rules(minimum: Int64(minimum)),
                now: 1_800_000_000_000)
            for row in rowsByMonth[month] ?? [] { expected[row.pair, default: 0] += row.amountMinor }
            let lines = try Self.lines(published.csv)
            lastCarried = [:]
            for (pair, columns) in lines {
                // opening + earned = balance; payable and carried split it.
                #expect(columns[0] + columns[1] == columns[2] && columns[3] + columns[4] == columns[2], "\(pair)")
                #expect(columns[3] == 0 || (columns[3] > 0 && columns[3] >= minimum), "\(pair) \(month)")
                paid[pair, default: 0] += columns[3]
                lastCarried[pair] = columns[4]
            }
            // Rewriting gives the same bytes, whatever the rules say now.
            let again = try PayoutPublisher.publish(
                journalPaths: [path], month: try Self.month(month), rules: try Self.rules(minimum: 1), now: 1)
            #expect(again.csv == published.csv && again.manifest == published.manifest && again.republished)
        }
        for pair in Set(expected.keys).union(paid.keys) {
            #expect(
                (paid[pair] ?? 0) + (lastCarried[pair] ?? 0) == (expected[pair] ?? 0),
                "\(pair.affiliateToken) \(pair.currency)")
        }
    }

    @Test func refusalsNameTheFirstMissingDayOrMonthAndStoreNothing() throws {
        defer { removeJournal() }
        let rules = try Self.rules(minimum: 0)
        func publish(_ month: String) throws -> PayoutPublisher.Files {
            try PayoutPublisher.publish(journalPaths: [path], month: try Self.month(month), rules: rules, now: 5)
        }
        _ = try JournalWriter(
            path: path, options: .init(durability: .normal, schema: .migrate, maintainsDerivedTables: false))
        #expect(throws: PayoutPublisher.Refusal.nothingPublished(month: try Self.month("2026-11"))) {
            try publish("2026-11")
        }
        var generator = SeededGenerator(seed: 3)
        let header = PublishedDaysFixture.exportCSV(
            day: "x", rows: 0, affiliates: ["a"], currencies: ["USD"], using: &generator
        ).csv
        try PublishedDaysFixture.publish(
            PublishedDaysFixture.days(from: "2026-10-30", through: "2026-11-20").map { ($0, header) }, in: path)
        #expect(
            throws: PayoutPublisher.Refusal.beforeFirstMonth(
                month: try Self.month("2026-09"), first: try Self.month("2026-10"))
        ) { try publish("2026-09") }
        #expect(
            throws: PayoutPublisher.Refusal.lastDayMissing(
                month: try Self.month("2026-11"), firstMissingDay: "2026-11-21")
        ) { try publish("2026-11") }
        try PublishedDaysFixture.publish(
            PublishedDaysFixture.days(from: "2026-11-21", through: "2026-12-31").map { ($0, header) }, in: path)
        #expect(
            throws: PayoutPublisher.Refusal.previousMonthMissing(
                month: try Self.month("2026-12"), firstMissingMonth: try Self.month("2026-10"))
        ) { try publish("2026-12") }
        #expect(try ReadOnlyJournal(path: path).lastPublishedMonth() == nil)
        _ = try publish("2026-10")
        #expect(
            throws: PayoutPublisher.Refusal.previousMonthMissing(
                month: try Self.month("2026-12"), firstMissingMonth: try Self.month("2026-11"))
        ) { try publish("2026-12") }
        _ = try publish("2026-11")
        let december = try publish("2026-12")
        #expect(
            !december.republished && String(decoding: december.csv, as: UTF8.self).split(separator: "\n").count == 1)
        #expect(try ReadOnlyJournal(path: path).lastPublishedMonth() == "2026-12")
    }

    @Test func aMonthWhoseSumOverflowsIsAnErrorAndNothingIsStored() throws {
        defer { removeJournal() }
        let row = { (amount: Int64) in
            "commission,c,2026-11-30T00:00:00.000Z,p,2026-11-30T00:00:00.000Z,aff,,join,,\(amount),USD,\n"
        }
        let csv = Array(
            (ExportPlan.header.joined(separator: ",") + "\n" + row(Int64.max) + row(1)).utf8)
        try PublishedDaysFixture.publish([("2026-11-30", csv)], in: path)
        #expect(throws: PayoutError.self) {
            try PayoutPublisher.publish(
                journalPaths: [path], month: try Self.month("2026-11"), rules: try Self.rules(minimum: 0), now: 5)
        }
        #expect(try ReadOnlyJournal(path: path).lastPublishedMonth() == nil)
    }

    private func removeJournal() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
