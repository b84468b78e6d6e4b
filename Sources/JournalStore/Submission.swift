import OfferTrackDomain

/// A validated record on its way into the journal, with its original line. A class: a batch's submissions are
/// handed from the event loop to the writer and its planner and back, and a copy costs one reference count, not
/// one for each string of the record and the line.
public final class Submission: Sendable {
    public let record: Record
    /// The line exactly as received (without its `\n` and one trailing `\r`).
    public let line: [UInt8]
    /// The stream partition a central daemon consumed it from; nil for a record sent to this daemon.
    public let partition: StreamPartition?

    public init(record: Record, line: [UInt8], partition: StreamPartition? = nil) {
        self.record = record
        self.line = line
        self.partition = partition
    }
}

/// What the journal did with one submission.
public enum AppendOutcome: Sendable, Equatable {
    /// Newly journaled with this sequence number.
    case accepted(seq: Int64)
    /// Already journaled with identical content under this sequence number.
    case duplicate(seq: Int64)
    /// The id is journaled with different content (or was, in a day since sealed, SPEC 12).
    case conflict
    /// Not journaled: the record's `ts` is before the acceptance horizon (SPEC 12), which is given.
    case expired(horizon: Int64)

    /// Whether the record is in the journal: accepted now or a duplicate of a journaled one.
    public var isJournaled: Bool {
        switch self {
        case .accepted, .duplicate: true
        case .conflict, .expired: false
        }
    }
}
