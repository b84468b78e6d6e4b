/// A string compared and hashed by its exact Unicode scalars (SPEC 3: no normalization), unlike `String`,
/// whose `==` and hashing use canonical equivalence.
struct ExactString: Hashable, Sendable {
    var value: String

    init(_ value: String) { self.value = value }

    static func == (lhs: ExactString, rhs: ExactString) -> Bool {
        lhs.value.utf8.elementsEqual(rhs.value.utf8)
    }

    func hash(into hasher: inout Hasher) {
        for byte in value.utf8 { hasher.combine(byte) }
    }

    /// Whether two optional strings are both absent or have the same scalars.
    static func same(_ lhs: String?, _ rhs: String?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case (let l?, let r?): l.utf8.elementsEqual(r.utf8)
        default: false
        }
    }
}
