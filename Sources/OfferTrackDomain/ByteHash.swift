/// A fast 64-bit hash of bytes, seeded once per process (so that no one can pick inputs that collide): eight
/// bytes at a time through SplitMix64's finalizer. For in-memory tables and filters only, never stored.
public enum ByteHash {
    /// This process's seed.
    public static let seed = UInt64.random(in: .min ... .max)

    /// The hash of `bytes`.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var state = seed ^ UInt64(bytes.count)
        var offset = 0
        while offset + 8 <= bytes.count {
            state = mix(state ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            tail |= UInt64(bytes[offset]) << shift
            shift += 8
            offset += 1
        }
        return mix(state ^ tail)
    }

    /// The hash of a string's UTF-8 bytes (its exact scalars).
    public static func hash(_ string: String) -> UInt64 {
        var string = string
        return string.withUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }

    /// SplitMix64's finalizer: every input bit affects every output bit, and distinct inputs stay distinct.
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
