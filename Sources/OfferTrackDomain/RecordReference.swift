/// A journaled record named by its `id` and `ts` (UTC epoch milliseconds), as a verdict cites it.
public struct RecordReference: Sendable, Equatable {
    public var id: String
    public var ts: Int64

    public init(id: String, ts: Int64) {
        self.id = id
        self.ts = ts
    }
}
