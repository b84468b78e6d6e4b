import Foundation
import OfferTrackDomain
import SQLite
import Simulator
import TestSupport
import Testing

@testable import AttributionJoin
@testable import JournalStore

/// The copies of user ids SQLite leaves in the unused space of pages it rebuilds (`UnusedSpaceScrub`): found, and
/// zeroed without changing a row or failing SQLite's integrity check.
@Suite struct UnusedSpaceScrubTests {
    /// A leaf table page (type 13) of 512 bytes, header at 0: two cells at 400 and 450, a freeblock of 20 bytes at
    /// 300 (next 0), cell content from 280; its unused ranges, computed by hand, are 12..<280 (the gap after the
    /// two cell pointers) and 304..<320 (the freeblock's body).
    static func leafPage() -> [UInt8] {
        var page = [UInt8](repeating: 0xAA, count: 512)
        page[0] = 13
        (page[1], page[2]) = (1, 44)  // first freeblock: 300
        (page[3], page[4]) = (0, 2)  // two cells
        (page[5], page[6]) = (1, 24)  // content from 280
        page[7] = 0
        (page[8], page[9], page[10], page[11]) = (1, 144, 1, 194)  // pointers 400, 450
        (page[300], page[301], page[302], page[303]) = (0, 0, 0, 20)  // next 0, size 20
        return page
    }

    @Test func aLeafPagesUnusedSpaceIsItsGapAndItsFreeblocksBodies() {
        Self.leafPage().withUnsafeBytes { page in
            #expect(
                BTreePageSpace.unusedRanges(of: page, isFirstPage: false, usableSize: 512) == [12..<280, 304..<320])
        }
    }

    /// Headers that do not describe a b-tree page: nothing of the page may be touched.
    @Test(arguments: [
        ("an overflow page's next-page number", 0, UInt8(0)),
        ("an unknown page type", 0, UInt8(7)),
        ("a cell pointer inside the gap", 9, UInt8(10)),
        ("content starting past the usable size", 5, UInt8(9)),
        ("a freeblock before the content area", 2, UInt8(10)),
        ("a freeblock running past the page", 303, UInt8(250)),
    ])
    func inconsistentHeadersAreLeftAlone(_ what: String, offset: Int, value: UInt8) {
        var page = Self.leafPage()
        page[offset] = value
        let before = page
        page.withUnsafeBytes { page in
            #expect(BTreePageSpace.unusedRanges(of: page, isFirstPage: false, usableSize: 512) == nil, "\(what)")
        }
        #expect(!page.withUnsafeMutableBytes { BTreePageSpace.zeroUnused($0, isFirstPage: false, usableSize: 512) })
        #expect(page == before)
    }

    @Test func zeroingTouchesOnlyTheUnusedRanges() {
        var page = Self.leafPage()
        #expect(page.withUnsafeMutableBytes { BTreePageSpace.zeroUnused($0, isFirstPage: false, usableSize: 512) })
        for offset in page.indices {
            let unused = (12..<280).contains(offset) || (304..<320).contains(offset)
            #expect(unused ? page[offset] == 0 : page[offset] == Self.leafPage()[offset], "byte \(offset)")
        }
        // A second time there is nothing to zero.
        #expect(!page.withUnsafeMutableBytes { BTreePageSpace.zeroUnused($0, isFirstPage: false, usableSize: 512) })
    }

    /// The size of the file at `path`, 0 when there is none.
    static func fileSize(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Every table's rows, in order, as text: what the scrub must leave unchanged.
    static func contents(_ connection: Connection) throws -> [String] {
        let tables = try connection.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        var names: [String] = []
        while try tables.step() { names.append(tables.text(0) ?? "") }
        tables.reset()
        var rows: [String] = []
        for name in names {
            let select = try connection.prepare("SELECT * FROM \"\(name)\" ORDER BY 1, 2")
            while try select.step() {
                rows.append(name + ":" + (0..<select.columnCount).map { select.text($0) ?? "∅" }.joined(separator: "|"))
            }
            select.reset()
        }
        return rows
    }

    @Test func idsLeftInRebuiltPagesAreFoundAndZeroedAndNoRowChanges() throws {
        let scratch = ScratchDirectory("unused-space")
        let path = scratch.path + "/journal.db"
        do {
            let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
            let lines = Array(WorkloadSimulator(users: 20_000, seed: 5, days: 2).lines)
            for start in stride(from: 0, to: lines.count, by: 500) {
                let batch = try lines[start..<min(start + 500, lines.count)].map(JournalRecordLines.submission)
                _ = try writer.append(batch, receivedAt: 0)
            }
        }
        let connection = try Connection(path: path, mode: .readWrite)
        _ = try connection.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)")
        let users = try UnusedSpaceIDs.users(of: path)
        let stale = try UnusedSpaceIDs.find(in: path, among: users)
        // SQLite's balancing left some (a fresh 1,000,000-record journal held 127 in its `users` index).
        try #require(!stale.isEmpty, "no user id in unused space to scrub: the test needs another seed")
        let before = try Self.contents(connection)
        let needles = stale.sorted().map { Array($0.utf8) }
        let pages = try UnusedSpaceScrub.pagesHolding(needles, on: connection)
        #expect(!pages.isEmpty)
        #expect(try UnusedSpaceScrub.pagesHolding(needles + [Self.zeros], on: connection) == pages)
        let outcome = try UnusedSpaceScrub.scrub(pages: pages, walPath: path + "-wal", on: connection)
        #expect(outcome == .scrubbed(pages: Set(pages).count))
        #expect(try UnusedSpaceScrub.pagesHolding(needles, on: connection).isEmpty)
        _ = try connection.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(try UnusedSpaceIDs.find(in: path, among: users).isEmpty)
        #expect(try Self.contents(connection) == before)
        #expect(try connection.scalarText("PRAGMA integrity_check") == "ok")
    }

    /// Pointer-map pages start with a b-tree page's type as often as not: an auto-vacuum file is not searched.
    @Test func anAutoVacuumFileIsNotSearched() throws {
        let scratch = ScratchDirectory("unused-space-vacuum")
        let connection = try Connection(path: scratch.path + "/auto.db", mode: .readWriteCreate)
        try connection.execute("PRAGMA auto_vacuum = FULL; CREATE TABLE t (a TEXT); INSERT INTO t VALUES ('u-1')")
        #expect(throws: UnusedSpaceScrub.Unsupported.self) {
            try UnusedSpaceScrub.pagesHolding([Array("u-1".utf8)], on: connection)
        }
    }

    @Test func nothingIsWrittenWhileTheWALHoldsFramesOrTheLockIsTaken() throws {
        let scratch = ScratchDirectory("unused-space-wal")
        let path = scratch.path + "/journal.db"
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        let lines = Array(WorkloadSimulator(users: 100, seed: 6).lines)
        _ = try writer.append(try lines[..<200].map(JournalRecordLines.submission), receivedAt: 0)
        let connection = try Connection(path: path, mode: .readWrite)
        _ = try connection.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)")
        _ = try writer.append(try lines[200...].map(JournalRecordLines.submission), receivedAt: 0)
        let wal = path + "-wal"
        try #require(Self.fileSize(wal) > 0)
        let size = try DatabaseFile(connection).size()
        try #require(size >= 3 * 4096)
        let pages = Array(2...(size / 4096))
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(try UnusedSpaceScrub.scrub(pages: pages, walPath: wal, on: connection) == .notNow)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(!connection.isInTransaction)
        // Nor while another connection holds the write lock (the writer in a long batch): not an error, not now.
        _ = try connection.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)")
        try #require(Self.fileSize(wal) == 0)
        let other = try Connection(path: path, mode: .readWrite)
        try other.execute("BEGIN IMMEDIATE")
        connection.setBusyTimeout(milliseconds: 0)
        #expect(try UnusedSpaceScrub.scrub(pages: pages, walPath: wal, on: connection) == .notNow)
        #expect(!connection.isInTransaction)
        try other.execute("ROLLBACK")
    }

    /// A needle of zero bytes only (an id of NULs, `\u0000` in JSON) is in every zeroed range, and no zeroing can
    /// remove it: it is not looked for, so the sweep does not report its pages round after round (beside ids that
    /// are found: `idsLeftInRebuiltPagesAreFoundAndZeroedAndNoRowChanges`).
    static let zeros = [UInt8](repeating: 0, count: 6)

    @Test func aNeedleOfZerosOnlyIsNotLookedFor() throws {
        let scratch = ScratchDirectory("unused-space-zeros")
        let path = scratch.path + "/journal.db"
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        let lines = Array(WorkloadSimulator(users: 300, seed: 8).lines)
        for start in stride(from: 0, to: lines.count, by: 500) {
            let batch = try lines[start..<min(start + 500, lines.count)].map(JournalRecordLines.submission)
            _ = try writer.append(batch, receivedAt: 0)
        }
        let connection = try Connection(path: path, mode: .readWrite)
        _ = try connection.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)")
        // The journal is not empty: its pages have unused space, most of it zeroed (secure_delete).
        #expect(try UnusedSpaceIDs.users(of: path).count >= 300)
        #expect(try UnusedSpaceScrub.pagesHolding([Self.zeros], on: connection).isEmpty)
        #expect(try UnusedSpaceScrub.pagesHolding([Self.zeros, [0, 0, 0, 0, 0, 0, 0, 0, 0]], on: connection).isEmpty)
    }
}
