/// Forgetting a person (SPEC 3.5 and 11): the `erasure` record's limits and the name it gives.
public enum Erasure {
    /// An erasure's `id` is at most this long, so that `erased:<id>` is a valid `user` (128 scalars).
    public static let maximumIDLength = 100
    /// A ticket's length limit.
    public static let maximumTicketLength = 100
    /// What every name an erasure gives starts with.
    public static let namePrefix = "erased:"

    /// The name erasure `id` gives its person's records.
    public static func name(erasureID id: String) -> String { namePrefix + id }
}

/// The erasure that named a user (SPEC 11), as `explain` shows it.
public struct ErasureReference: Sendable, Equatable {
    public var record: RecordReference
    /// The operator's reference for the request.
    public var ticket: String

    public init(record: RecordReference, ticket: String) {
        self.record = record
        self.ticket = ticket
    }
}
