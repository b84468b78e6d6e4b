/// The half-open range `[since, until)` of `offertrack report`, in UTC epoch milliseconds; each bound optional.
public struct ReportRange: Sendable, Equatable {
    public var since: Int64?
    public var until: Int64?

    public init(since: Int64? = nil, until: Int64? = nil) {
        self.since = since
        self.until = until
    }

    /// Every instant.
    public static let all = ReportRange()

    /// Whether `ts` is at or after `since` and before `until`.
    public func contains(_ ts: Int64) -> Bool {
        if let since, ts < since { return false }
        if let until, ts >= until { return false }
        return true
    }
}
