import OfferTrackDomain

/// A validated record on its way into the journal, with its original line.
public struct Submission: Sendable {
    public let record: Record
    /// The line exactly as received (without its `\n` and one trailing `\r`).
    public let line: [UInt8]

    public init(record: Record, line: [UInt8]) {
        self.record = record
        self.line = line
    }
}

/// What the journal did with one submission.
public enum AppendOutcome: Sendable, Equatable {
    /// Newly journaled with this sequence number.
    case accepted(seq: Int64)
    /// Already journaled with identical content under this sequence number.
    case duplicate(seq: Int64)
    /// The id is journaled with different content.
    case conflict
}
