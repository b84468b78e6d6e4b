import CLinux

/// Finding bytes in bytes (glibc's `memmem`).
public enum ByteSearch {
    /// Whether `haystack` holds `needle` whole (never for an empty needle).
    public static func contains(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Bool {
        guard let base = haystack.baseAddress, !needle.isEmpty, needle.count <= haystack.count else { return false }
        return needle.withUnsafeBytes { offertrack_contains_bytes(base, haystack.count, $0.baseAddress, needle.count) }
            != 0
    }
}
