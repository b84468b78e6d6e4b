/// A fleet's partition of users (SPEC section 10): the 32-bit FNV-1a hash of the user's UTF-8 bytes, modulo P.
public enum Partition {
    /// The 32-bit FNV-1a hash of `bytes` (offset basis 2166136261, prime 16777619).
    public static func fnv1a32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in bytes {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return hash
    }

    /// The partition of `user` among `total` (> 0) partitions.
    public static func of(user: String, total: Int) -> Int {
        Int(fnv1a32(user.utf8) % UInt32(max(1, total)))
    }

    /// The stream subject a record of that partition is published to.
    public static func subject(_ partition: Int) -> String { "offertrack.records.\(partition)" }
}
