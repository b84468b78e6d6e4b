/// The `user` values that name no single person (SPEC rule 4.0, the rules file's `sharedUsers`): such a user's
/// records are journaled and counted, but their conversion is never attributed. Matched after ASCII lowercasing
/// of both sides, and otherwise by exact scalars.
public struct SharedUsers: Sendable, Hashable {
    /// The entries as the rules file wrote them, in file order.
    public let entries: [String]
    /// The entries lowercased (ASCII only), for matching.
    private let lowercased: Set<ExactString>
    /// Bit `n` set when an entry is `n` UTF-8 bytes long (lowercasing keeps the length): a user of another length
    /// is no entry, which `contains` answers without hashing (the writer asks for every user of every batch).
    private let lengths: [UInt64]

    /// The SPEC's list when the rules file has no `sharedUsers`.
    public static let defaults = SharedUsers([
        "anonymous", "anon", "guest", "unknown", "undefined", "null", "nil", "none", "n/a", "0", "-1",
        "00000000-0000-0000-0000-000000000000",
    ])

    /// No shared users (`"sharedUsers": []`): rule 4.0 is off.
    public static let none = SharedUsers([])

    /// The list as given (already validated: valid users, distinct as written).
    public init(_ entries: [String]) {
        self.entries = entries
        self.lowercased = Set(entries.map { ExactString($0.asciiLowercased) })
        var lengths = [UInt64](repeating: 0, count: (entries.map(\.utf8.count).max() ?? -1) / 64 + 1)
        for entry in entries { lengths[entry.utf8.count / 64] |= 1 << (entry.utf8.count % 64) }
        self.lengths = lengths
    }

    /// Whether `user` is one of the entries, both lowercased in ASCII.
    public func contains(_ user: String) -> Bool {
        let length = user.utf8.count
        guard length / 64 < lengths.count, lengths[length / 64] & (1 << (length % 64)) != 0 else { return false }
        return lowercased.contains(ExactString(user.asciiLowercased))
    }

    public static func == (lhs: SharedUsers, rhs: SharedUsers) -> Bool { lhs.lowercased == rhs.lowercased }

    public func hash(into hasher: inout Hasher) { hasher.combine(lowercased) }
}

extension String {
    /// The string with `A`–`Z` turned into `a`–`z` and every other scalar left as it is.
    public var asciiLowercased: String {
        guard utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return self }
        return String(decoding: utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}
