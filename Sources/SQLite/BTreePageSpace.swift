/// The space of a b-tree page that holds no cell, read from the page's own header (SQLite's file format, section
/// 1.6): the gap between the cell pointer array and the cell content area, and the body of each freeblock (its
/// first four bytes are the free list's links). SQLite never reads these bytes, and with `secure_delete` zeroes
/// most of them, but not the gap a page keeps when `rebuildPage` writes its cells anew during a balance: there the
/// old content stays until overwritten.
public enum BTreePageSpace {
    /// The unused ranges of `page` (a whole page image; `isFirstPage` for page 1, whose b-tree header follows the
    /// 100-byte file header; `usableSize` the page size less the reserved bytes), or nil when `page` is not a
    /// b-tree page whose header is consistent (then nothing of it may be touched).
    public static func unusedRanges(of page: UnsafeRawBufferPointer, isFirstPage: Bool, usableSize: Int)
        -> [Range<Int>]?
    {
        let header = isFirstPage ? 100 : 0
        guard usableSize >= 480, usableSize <= page.count, header + 12 <= usableSize else { return nil }
        func u16(_ offset: Int) -> Int { Int(page[offset]) << 8 | Int(page[offset + 1]) }
        let headerSize: Int
        switch page[header] {
        case 2, 5: headerSize = 12
        case 10, 13: headerSize = 8
        default: return nil
        }
        let cells = u16(header + 3)
        let contentStart = u16(header + 5) == 0 ? 65536 : u16(header + 5)
        let pointersEnd = header + headerSize + 2 * cells
        guard pointersEnd <= contentStart, contentStart <= usableSize else { return nil }
        for cell in 0..<cells {
            let pointer = u16(header + headerSize + 2 * cell)
            guard pointer >= contentStart, pointer < usableSize else { return nil }
        }
        var ranges = pointersEnd < contentStart ? [pointersEnd..<contentStart] : []
        // Freeblocks: in increasing order, inside the content area, each at least 4 bytes, none touching the next.
        var freeblock = u16(header + 1)
        var previousEnd = contentStart
        while freeblock != 0 {
            guard freeblock >= previousEnd, freeblock + 4 <= usableSize else { return nil }
            let size = u16(freeblock + 2)
            guard size >= 4, freeblock + size <= usableSize else { return nil }
            if size > 4 { ranges.append(freeblock + 4..<freeblock + size) }
            previousEnd = freeblock + size + 1
            freeblock = u16(freeblock)
        }
        return ranges
    }

    /// Zeroes `page`'s unused ranges (nothing when it is not a consistent b-tree page); whether a byte changed.
    public static func zeroUnused(_ page: UnsafeMutableRawBufferPointer, isFirstPage: Bool, usableSize: Int) -> Bool {
        guard
            let ranges = unusedRanges(
                of: UnsafeRawBufferPointer(page), isFirstPage: isFirstPage, usableSize: usableSize)
        else { return false }
        var changed = false
        for range in ranges where page[range].contains(where: { $0 != 0 }) {
            page[range].initializeMemory(as: UInt8.self, repeating: 0)
            changed = true
        }
        return changed
    }
}
