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
    public static func subject(_ partition: Int) -> String { subjectPrefix + String(partition) }

    /// What every partition's subject starts with.
    public static let subjectPrefix = "offertrack.records."

    /// The partition whose subject is `subject`; nil for any other subject.
    public static func of(subject: String) -> Int? {
        guard subject.hasPrefix(subjectPrefix) else { return nil }
        return Int(subject.dropFirst(subjectPrefix.count))
    }

    /// Why a partition list does not parse.
    public enum ListError: Error, Equatable {
        /// Not a list like `0-7` or `0,2,4` (each partition below 4096).
        case malformed
        /// A partition named twice.
        case repeated
    }

    /// The partitions of a list like `0-7`, `0,2,4` or `0-3,8-11`, ascending.
    public static func list(_ text: String) throws(ListError) -> [Int] {
        var found: [Int] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
            guard (1...2).contains(bounds.count), let low = bounds.first ?? nil, let high = bounds.last ?? nil,
                low >= 0, low <= high, high < 4096
            else { throw .malformed }
            found += Array(low...high)
        }
        guard Set(found).count == found.count else { throw .repeated }
        return found.sorted()
    }
}
