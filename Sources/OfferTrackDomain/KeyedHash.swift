/// The keyed hashes that let a journal recognise a forgotten person's later records without keeping their id
/// (SPEC section 11): a fast 64-bit SipHash-2-4 to rule most users out, and HMAC-SHA256 to be sure.
public enum KeyedHash {
    /// SipHash-2-4 of `string`'s UTF-8 bytes under the first 16 bytes of `key` (the writer's test of each record).
    public static func sipHash(_ string: String, key: [UInt8]) -> UInt64 {
        var string = string
        return string.withUTF8 { sipHash(UnsafeRawBufferPointer($0), key: key) }
    }

    /// SipHash-2-4 of `bytes` under the first 16 bytes of `key` (little-endian, as the reference).
    public static func sipHash(_ bytes: [UInt8], key: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { sipHash($0, key: key) }
    }

    /// SipHash-2-4 of `bytes` under the first 16 bytes of `key`.
    public static func sipHash(_ bytes: UnsafeRawBufferPointer, key: [UInt8]) -> UInt64 {
        precondition(key.count >= 16, "SipHash needs a 16-byte key")
        var k0: UInt64 = 0
        var k1: UInt64 = 0
        for index in 0..<8 {
            k0 |= UInt64(key[index]) << (8 * UInt64(index))
            k1 |= UInt64(key[index + 8]) << (8 * UInt64(index))
        }
        var state = SipState(
            v0: 0x736f_6d65_7073_6575 ^ k0, v1: 0x646f_7261_6e64_6f6d ^ k1, v2: 0x6c79_6765_6e65_7261 ^ k0,
            v3: 0x7465_6462_7974_6573 ^ k1)
        let words = bytes.count / 8
        for index in 0..<words {
            state.compress(UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)))
        }
        var last = UInt64(truncatingIfNeeded: bytes.count) << 56
        for index in (words * 8)..<bytes.count { last |= UInt64(bytes[index]) << (8 * UInt64(index - words * 8)) }
        state.compress(last)
        state.v2 ^= 0xff
        for _ in 0..<4 { state.round() }
        return state.v0 ^ state.v1 ^ state.v2 ^ state.v3
    }

    /// SipHash's four words of state.
    private struct SipState {
        var v0: UInt64
        var v1: UInt64
        var v2: UInt64
        var v3: UInt64

        /// Two rounds over one 8-byte word.
        @inline(__always)
        mutating func compress(_ word: UInt64) {
            v3 ^= word
            round()
            round()
            v0 ^= word
        }

        @inline(__always)
        mutating func round() {
            v0 = v0 &+ v1
            v1 = v1.rotatedLeft(13) ^ v0
            v0 = v0.rotatedLeft(32)
            v2 = v2 &+ v3
            v3 = v3.rotatedLeft(16) ^ v2
            v0 = v0 &+ v3
            v3 = v3.rotatedLeft(21) ^ v0
            v2 = v2 &+ v1
            v1 = v1.rotatedLeft(17) ^ v2
            v2 = v2.rotatedLeft(32)
        }
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

extension UInt64 {
    @inline(__always)
    fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 { (self << count) | (self >> (64 - count)) }
}
