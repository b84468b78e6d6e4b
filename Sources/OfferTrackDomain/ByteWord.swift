/// Eight bytes of text read as one little-endian word, to scan ASCII a word at a time instead of a byte at a time.
///
/// Each test answers a mask with the high bit of every byte that matches. The lowest flagged byte is exact; a byte
/// above it may be flagged wrongly (a borrow), so the mask is zero exactly when no byte matches, and
/// ``firstFlagged(_:)`` is the offset of the first byte that does.
public enum ByteWord {
    /// The eight bytes at `offset` from `base`, the first the lowest.
    @inlinable
    public static func load(_ base: UnsafeRawPointer, at offset: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The bytes of `word` equal to `byte`.
    @inlinable
    public static func bytes(of word: UInt64, equalTo byte: UInt8) -> UInt64 {
        let difference = word ^ (ones &* UInt64(byte))
        return (difference &- ones) & ~difference & highs
    }

    /// The bytes of `word` below `limit` (at most 0x80).
    @inlinable
    public static func bytes(of word: UInt64, below limit: UInt8) -> UInt64 {
        (word &- ones &* UInt64(limit)) & ~word & highs
    }

    /// The bytes of `word` that are not ASCII (0x80 and above).
    @inlinable
    public static func nonASCII(_ word: UInt64) -> UInt64 { word & highs }

    /// The offset in its word of the first byte a non-zero `mask` flags.
    @inlinable
    public static func firstFlagged(_ mask: UInt64) -> Int { mask.trailingZeroBitCount >> 3 }

    @usableFromInline static let ones: UInt64 = 0x0101_0101_0101_0101
    @usableFromInline static let highs: UInt64 = 0x8080_8080_8080_8080
}
