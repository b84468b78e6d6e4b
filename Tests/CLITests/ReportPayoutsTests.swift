import AttributionJoin
import Foundation
import JournalStore
import OfferTrackDomain
import OutputFormats
import PublishedLedger
import Testing

@testable import OfferTrackCLI

/// Which payout month the HTML report's tiles show: the latest that ended by `--as-of`, and with several journals
/// only one that all of them hold alike.
@Suite struct ReportPayoutsTests {
    /// A fresh journal, removed with its companions by `cleanUp`.
    static func journal(_ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "report-payouts-\(name)-\(UInt32.random(in: 0...UInt32.max)).db"
        _ = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        return path
    }

    static func cleanUp(_ paths: [String]) {
        for path in paths {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
    }

    static func publish(_ month: String, payable: Int64, carried: Int64, in path: String) throws {
        let manifest =
            #"{"month":"\#(month)","lines":1,"minimumMinor":0,"totals":{"EUR":{"earnedMinor":0,"#
            + #""payableMinor":\#(payable),"carriedMinor":\#(carried)}},"sha256":"","generatedAt":"2026-12-02T00:00:00.000Z"}"#
        let store = try PayoutMonthStore(journalPath: path, busyTimeoutMilliseconds: 1000)
        _ = try store.store(
            csv: [], manifest: Array(manifest.utf8), month: try #require(PayoutMonth(month)), generatedAt: 0)
    }

    static func payouts(_ paths: [String], asOf day: String) throws -> HTMLReport.Payouts {
        try ReportCommand.payouts(paths.map { try ReadOnlyJournal(path: $0) }, asOf: Timestamp.parseDay(day) ?? 0)
    }

    static func month(_ payouts: HTMLReport.Payouts) -> String? {
        guard case .published(let month) = payouts else { return nil }
        return month.month
    }

    @Test func theLatestMonthEndedByAsOf() throws {
        let path = try Self.journal("one")
        defer { Self.cleanUp([path]) }
        #expect(try Self.payouts([path], asOf: "2026-12-01") == .unpublished)
        try Self.publish("2026-10", payable: 1800, carried: 2700, in: path)
        try Self.publish("2026-11", payable: 4500, carried: 0, in: path)
        #expect(try Self.payouts([path], asOf: "2026-10-31") == .unpublished)
        #expect(try Self.month(Self.payouts([path], asOf: "2026-11-15")) == "2026-10")
        guard case .published(let november) = try Self.payouts([path], asOf: "2026-12-01") else {
            Issue.record("November is not shown on 2026-12-01")
            return
        }
        #expect(november.month == "2026-11" && november.generatedAt == "2026-12-02T00:00:00.000Z")
        #expect(november.totals.map { [$0.currency: [$0.payableMinor, $0.carriedMinor]] } == [["EUR": [4500, 0]]])
    }

    @Test func severalJournalsShowAMonthOnlyWhenTheyAllHoldItAlike() throws {
        let paths = [try Self.journal("a"), try Self.journal("b")]
        defer { Self.cleanUp(paths) }
        #expect(try Self.payouts(paths, asOf: "2026-12-01") == .unpublished)
        // A publication stopped after the first journal: the second lacks the month.
        try Self.publish("2026-11", payable: 4500, carried: 0, in: paths[0])
        #expect(try Self.payouts(paths, asOf: "2026-12-01") == .journalsDisagree)
        #expect(try Self.payouts(paths.reversed(), asOf: "2026-12-01") == .journalsDisagree)
        try Self.publish("2026-11", payable: 4500, carried: 0, in: paths[1])
        #expect(try Self.month(Self.payouts(paths, asOf: "2026-12-01")) == "2026-11")
        // The same month with other bytes is not the same statement.
        try Self.publish("2026-10", payable: 1800, carried: 2700, in: paths[0])
        try Self.publish("2026-10", payable: 1801, carried: 2700, in: paths[1])
        #expect(try Self.payouts(paths, asOf: "2026-11-15") == .journalsDisagree)
    }

    @Test func aManifestThatIsNotOneIsRefused() throws {
        let path = try Self.journal("bad")
        defer { Self.cleanUp([path]) }
        let store = try PayoutMonthStore(journalPath: path, busyTimeoutMilliseconds: 1000)
        let month = try #require(PayoutMonth("2026-11"))
        _ = try store.store(
            csv: [], manifest: Array(#"{"totals":{"EUR":{"payableMinor":1.5}}}"#.utf8), month: month, generatedAt: 0)
        #expect(throws: PayoutError.self) { try Self.payouts([path], asOf: "2026-12-01") }
    }
}
