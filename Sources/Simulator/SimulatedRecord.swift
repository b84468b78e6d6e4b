import OfferTrackDomain

/// One line of a simulated workload and the record it stands for.
public struct SimulatedRecord: Sendable, Equatable {
    /// The NDJSON line, without its terminating `\n`.
    public var line: String
    /// The record the line validates to.
    public var record: Record
    /// True when this line repeats an earlier line exactly (same `id`, same content).
    public var isDuplicate: Bool

    public init(line: String, record: Record, isDuplicate: Bool) {
        self.line = line
        self.record = record
        self.isDuplicate = isDuplicate
    }
}
