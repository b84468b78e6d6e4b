/// Users' groups of records by the path of the join that took them (`JournalWriter+Join`, docs/development/
/// batch-join.md), since the writer was made; the groups of users new to the journal whose records were all accepted
/// (the plan's attribution) and of merged users (recomputed whole) are not counted.
public struct JoinCounts: Equatable, Sendable {
    /// From the writer's summary of the user alone, nothing read (`joinAfterSummary`).
    public var fromSummary = 0
    /// A lone check that came behind the user's presentation, from the summary and one range read
    /// (`joinLateCheck`).
    public var lateChecks = 0
    /// By `DerivedTables.refresh`: a short history read whole, or index lookups.
    public var refreshed = 0

    public init(fromSummary: Int = 0, lateChecks: Int = 0, refreshed: Int = 0) {
        self.fromSummary = fromSummary
        self.lateChecks = lateChecks
        self.refreshed = refreshed
    }
}
