/// A string hashed and compared by its exact UTF-8 bytes (no canonical equivalence), for member-name sets.
struct ExactKey: Hashable {
    let key: String

    static func == (lhs: ExactKey, rhs: ExactKey) -> Bool { ExactText.equals(lhs.key, rhs.key) }

    func hash(into hasher: inout Hasher) {
        for byte in key.utf8 { hasher.combine(byte) }
    }
}
