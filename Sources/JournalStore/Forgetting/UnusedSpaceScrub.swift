import Posix
import SQLite

/// SPEC 11's "their id in no file" where SQLite itself leaves copies: when a balance rebuilds a b-tree page
/// (`rebuildPage`), the page's old cells stay in the gap between its cell pointers and its new cells, and
/// `secure_delete` never zeroes that gap, so a forgotten person's id can outlive their rename there (bench/
/// CHANGELOG.md: two copies after a 100,000-record person's erasure; 127 user ids in a fresh 1,000,000-record
/// journal's `users` index). This finds the pages whose unused space holds one of the erased ids and zeroes that
/// space in the file, past SQLite's pager, under the write lock while the WAL is empty (after a `TRUNCATE`), so
/// that no checkpoint can write those pages meanwhile. Only bytes SQLite never reads are written.
package enum UnusedSpaceScrub {
    /// What a scrub did.
    package enum Outcome: Equatable, Sendable {
        /// This many pages had their unused space zeroed (and were synced).
        case scrubbed(pages: Int)
        /// Nothing was written: another connection held the write lock past the busy timeout, or the WAL held
        /// frames once it was taken (a commit came first).
        case notNow
    }

    /// A journal whose pages cannot all be told apart by their first byte: nothing is searched or written.
    package struct Unsupported: Error, CustomStringConvertible {
        package var description: String
    }

    /// The file's geometry, from its header.
    struct Geometry {
        var pageSize: Int
        var usableSize: Int

        /// Pages that are not b-tree pages are told apart by their first byte only: an overflow page and a freelist
        /// trunk page start with a page number, whose first byte is 0 or 1 below 2^25 pages (128 GiB of 4 KiB
        /// pages), never a b-tree page's type (2, 5, 10, 13). Pointer-map pages (auto-vacuum) would not be: such
        /// a file, or a larger one, is `Unsupported`. Free pages may be taken for b-tree pages, which is harmless.
        static let largestPageCount: Int64 = 1 << 25

        init(_ file: DatabaseFile) throws {
            var header = [UInt8](repeating: 0, count: 100)
            try header.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
            let size = Int(header[16]) << 8 | Int(header[17])
            pageSize = size == 1 ? 65536 : size
            usableSize = pageSize - Int(header[20])
            guard pageSize >= 512, pageSize & (pageSize - 1) == 0 else {
                throw SQLiteError(code: 11, message: "the journal's header gives no page size")
            }
            guard header[52..<56].allSatisfy({ $0 == 0 }) else {
                throw Unsupported(description: "the journal uses auto-vacuum (pointer-map pages)")
            }
            guard try file.size() / Int64(pageSize) < Self.largestPageCount else {
                throw Unsupported(description: "the journal has 2^25 pages or more")
            }
        }

        /// Page 1's header and the lock-byte page (never used) aside, every page may be a b-tree page.
        func isScrubbable(_ page: Int64) -> Bool {
            page > 1 && page != Int64(0x4000_0000 / pageSize) + 1 && page < Self.largestPageCount
        }
    }

    /// The pages (numbered from 1) whose unused space holds one of `needles`, read from `connection`'s file as it
    /// is now (no transaction: a page being written meanwhile may be missed, which the next search finds).
    ///
    /// Only the unused ranges are read for the needles, and only those holding a byte other than zero (with
    /// `secure_delete` most do not): what a search costs follows the stale bytes, not the file's size in bytes. A
    /// needle of zero bytes only is not looked for: it is in every zeroed range, and zeroing cannot remove it.
    package static func pagesHolding(_ needles: [[UInt8]], on connection: Connection) throws -> [Int64] {
        let file = try DatabaseFile(connection)
        let geometry = try Geometry(file)
        let size = try file.size()
        let needles = NeedleSet(needles.filter { needle in needle.contains { $0 != 0 } })
        guard !needles.isEmpty else { return [] }
        let pagesPerRead = max(1, (1 << 20) / geometry.pageSize)
        var buffer = [UInt8](repeating: 0, count: pagesPerRead * geometry.pageSize)
        var found: [Int64] = []
        var offset: Int64 = 0
        while offset < size {
            let pagesRead = Int(min(Int64(pagesPerRead), (size - offset) / Int64(geometry.pageSize)))
            guard pagesRead > 0 else { break }
            try buffer.withUnsafeMutableBytes { bytes in
                try file.read(into: bytes, at: offset)
                for index in 0..<pagesRead {
                    let page = offset / Int64(geometry.pageSize) + Int64(index) + 1
                    let start = index * geometry.pageSize
                    let image = UnsafeRawBufferPointer(rebasing: bytes[start..<start + geometry.pageSize])
                    if geometry.isScrubbable(page), unusedSpace(of: image, geometry: geometry, holdsAnyOf: needles) {
                        found.append(page)
                    }
                }
            }
            offset += Int64(buffer.count)
        }
        return found
    }

    /// The same, on a read-only connection of its own to the journal at `path`.
    package static func pagesHolding(_ needles: [[UInt8]], inJournalAt path: String) throws -> [Int64] {
        let connection = try JournalOpening.open(
            path: path, mode: .readOnly, schema: .anyVersion, busyTimeoutMilliseconds: 0)
        return try pagesHolding(needles, on: connection)
    }

    /// Whether an unused range of the page `image` holds one of `needles` whole.
    static func unusedSpace(of image: UnsafeRawBufferPointer, geometry: Geometry, holdsAnyOf needles: NeedleSet)
        -> Bool
    {
        guard let ranges = BTreePageSpace.unusedRanges(of: image, isFirstPage: false, usableSize: geometry.usableSize)
        else { return false }
        return ranges.contains { range in
            let bytes = UnsafeRawBufferPointer(rebasing: image[range])
            return !ByteSearch.isZero(bytes) && needles.occurs(in: bytes)
        }
    }

    /// Zeroes the unused space of `pages` in the journal's file, on `connection` (no transaction open), if the WAL
    /// at `walPath` is empty once the write lock is held. Then commits one frame (page 1's `user_version`,
    /// rewritten as it is), so that every other connection, seeing the WAL change, drops the pages it cached before
    /// the scrub and cannot write their old unused space back.
    package static func scrub(pages: [Int64], walPath: String, on connection: Connection) throws -> Outcome {
        connection.releaseCachedPages()
        do {
            try connection.execute("BEGIN IMMEDIATE")
        } catch {
            guard error.isBusy else { throw error }
            return .notNow
        }
        do {
            guard (CurrentProcess.fileSize(walPath) ?? 0) == 0 else {
                try connection.execute("ROLLBACK")
                return .notNow
            }
            let file = try DatabaseFile(connection)
            let geometry = try Geometry(file)
            let fileSize = try file.size()
            var written = 0
            var image = [UInt8](repeating: 0, count: geometry.pageSize)
            for page in Set(pages).sorted() where geometry.isScrubbable(page) {
                let offset = (page - 1) * Int64(geometry.pageSize)
                guard offset + Int64(geometry.pageSize) <= fileSize else { continue }
                try image.withUnsafeMutableBytes { bytes in
                    try file.read(into: bytes, at: offset)
                    if BTreePageSpace.zeroUnused(bytes, isFirstPage: false, usableSize: geometry.usableSize) {
                        try file.write(UnsafeRawBufferPointer(bytes), at: offset)
                        written += 1
                    }
                }
            }
            if written > 0 {
                try file.sync()
                let version = try connection.scalarInt("PRAGMA user_version") ?? 0
                try connection.execute("PRAGMA user_version = \(version)")
            }
            try connection.execute("COMMIT")
            return .scrubbed(pages: written)
        } catch {
            connection.rollbackIfActive()
            throw error
        }
    }
}
