import CLinux

/// Finding bytes in bytes (glibc's `memmem`).
public enum ByteSearch {
    /// Whether `haystack` holds `needle` whole (never for an empty needle).
    public static func contains(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Bool {
        guard let base = haystack.baseAddress, !needle.isEmpty, needle.count <= haystack.count else { return false }
        return needle.withUnsafeBytes { offertrack_contains_bytes(base, haystack.count, $0.baseAddress, needle.count) }
            != 0
    }

    /// Whether every byte of `bytes` is zero (true for none).
    public static func isZero(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        return offertrack_is_zero(base, bytes.count) != 0
    }
}

/// Several needles looked for in one pass over a haystack, at a cost that does not grow with their number (a
/// search for each with `memmem` costs the haystack's length once a needle).
///
/// Each needle is known by its last `keyLength` bytes (the shortest needle's length, at most 4: ids often share a
/// prefix and differ at the end). One pass reads each window of that many bytes, tests a bit of a 65,536-bit table
/// of the keys' hashes, and only on a hit compares the needles with that key whole: about 1.3 ns a byte here whatever
/// the number of needles, where `memmem` takes 0.2 ns a byte for each (256 MiB with 1, 3, 20 and 200 needles:
/// 0.34–0.35 s against 0.05, 0.15, 1.1 and 11 s). Up to `memmemLimit` needles it is `memmem`, faster for so few.
public struct NeedleSet: Sendable {
    /// With at most this many needles, each is searched with `memmem`.
    public static let memmemLimit = 6
    private let needles: [[UInt8]]
    private let keyLength: Int
    /// One bit per 16-bit hash of a key.
    private let filter: [UInt64]
    /// The needles (their positions in `needles`) by key.
    private let byKey: [UInt32: [Int]]

    /// The set of `needles`; empty ones are left out (they are never found).
    public init(_ needles: [[UInt8]]) {
        self.needles = needles.filter { !$0.isEmpty }
        keyLength = min(4, self.needles.map(\.count).min() ?? 1)
        var filter = [UInt64](repeating: 0, count: 1024)
        var byKey: [UInt32: [Int]] = [:]
        for (index, needle) in self.needles.enumerated() {
            let key = Self.key(needle, endingAt: needle.count, length: keyLength)
            let hash = Self.hash(key)
            filter[hash >> 6] |= 1 << UInt64(hash & 63)
            byKey[key, default: []].append(index)
        }
        self.filter = filter
        self.byKey = byKey
    }

    /// Whether the set holds no needle.
    public var isEmpty: Bool { needles.isEmpty }

    /// Whether `haystack` holds one of the needles whole.
    public func occurs(in haystack: UnsafeRawBufferPointer) -> Bool {
        if needles.count <= Self.memmemLimit { return needles.contains { ByteSearch.contains($0, in: haystack) } }
        guard let base = haystack.baseAddress, haystack.count >= keyLength else { return false }
        return filter.withUnsafeBufferPointer { filter in
            // Each window of `keyLength` bytes, by where it ends (exclusive), as its key.
            func hit(_ window: UInt32, endingAt end: Int) -> Bool {
                let hash = Self.hash(window)
                guard filter[hash >> 6] & (1 << UInt64(hash & 63)) != 0, let candidates = byKey[window] else {
                    return false
                }
                return candidates.contains { Self.matches(needles[$0], endingAt: end, in: haystack) }
            }
            if keyLength == 4 {
                // The common case, its test of the table inline: most windows end here.
                for start in 0...(haystack.count - 4) {
                    let window = UInt32(bigEndian: base.loadUnaligned(fromByteOffset: start, as: UInt32.self))
                    let hash = Self.hash(window)
                    if filter[hash >> 6] & (1 << UInt64(hash & 63)) != 0, hit(window, endingAt: start + 4) {
                        return true
                    }
                }
                return false
            }
            var window: UInt32 = 0
            let mask: UInt32 = (1 << UInt32(8 * keyLength)) - 1
            for end in 1...haystack.count {
                window = ((window << 8) | UInt32(haystack[end - 1])) & mask
                if end >= keyLength, hit(window, endingAt: end) { return true }
            }
            return false
        }
    }

    /// The `length` bytes of `bytes` before `end`, first byte highest.
    private static func key(_ bytes: [UInt8], endingAt end: Int, length: Int) -> UInt32 {
        var key: UInt32 = 0
        for byte in bytes[(end - length)..<end] { key = (key << 8) | UInt32(byte) }
        return key
    }

    private static func hash(_ key: UInt32) -> Int { Int((key &* 0x9E37_79B1) >> 16) }

    private static func matches(_ needle: [UInt8], endingAt end: Int, in haystack: UnsafeRawBufferPointer) -> Bool {
        guard end >= needle.count else { return false }
        let start = end - needle.count
        for offset in 0..<needle.count where haystack[start + offset] != needle[offset] { return false }
        return true
    }
}
