/// The keyed hashes that let a journal recognise a forgotten person's later records without keeping their id
/// (SPEC section 11): a fast 64-bit SipHash-2-4 to rule most users out, and HMAC-SHA256 to be sure.
public enum KeyedHash {
    /// SipHash-2-4 of `bytes` under the first 16 bytes of `key` (little-endian, as the reference).
    public static func sipHash(_ bytes: some Collection<UInt8>, key: [UInt8]) -> UInt64 {
        precondition(key.count >= 16, "SipHash needs a 16-byte key")
        var k0: UInt64 = 0
        var k1: UInt64 = 0
        for index in 0..<8 {
            k0 |= UInt64(key[index]) << (8 * UInt64(index))
            k1 |= UInt64(key[index + 8]) << (8 * UInt64(index))
        }
        var v0: UInt64 = 0x736f_6d65_7073_6575 ^ k0
        var v1: UInt64 = 0x646f_7261_6e64_6f6d ^ k1
        var v2: UInt64 = 0x6c79_6765_6e65_7261 ^ k0
        var v3: UInt64 = 0x7465_6462_7974_6573 ^ k1
        func round() {
            v0 = v0 &+ v1
            v1 = (v1 << 13) | (v1 >> 51)
            v1 ^= v0
            v0 = (v0 << 32) | (v0 >> 32)
            v2 = v2 &+ v3
            v3 = (v3 << 16) | (v3 >> 48)
            v3 ^= v2
            v0 = v0 &+ v3
            v3 = (v3 << 21) | (v3 >> 43)
            v3 ^= v0
            v2 = v2 &+ v1
            v1 = (v1 << 17) | (v1 >> 47)
            v1 ^= v2
            v2 = (v2 << 32) | (v2 >> 32)
        }
        var word: UInt64 = 0
        var filled: UInt64 = 0
        for byte in bytes {
            word |= UInt64(byte) << (8 * filled)
            filled += 1
            if filled == 8 {
                v3 ^= word
                round()
                round()
                v0 ^= word
                word = 0
                filled = 0
            }
        }
        let last = word | (UInt64(truncatingIfNeeded: bytes.count) << 56)
        v3 ^= last
        round()
        round()
        v0 ^= last
        v2 ^= 0xff
        round()
        round()
        round()
        round()
        return v0 ^ v1 ^ v2 ^ v3
    }

    /// HMAC-SHA256 (RFC 2104) of `message` under `key`.
    public static func hmacSHA256(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        var block = key
        if key.count > 64 {
            var hasher = SHA256()
            hasher.update(key)
            block = hasher.finalize()
        }
        block += [UInt8](repeating: 0, count: 64 - block.count)
        var inner = SHA256()
        inner.update(block.map { $0 ^ 0x36 })
        inner.update(message)
        var outer = SHA256()
        outer.update(block.map { $0 ^ 0x5c })
        outer.update(inner.finalize())
        return outer.finalize()
    }
}
