/// The recompute of the derived tables that a reload with new windows started, as the event loop follows it (the
/// writer's side is `RecomputeChunks`): when it began, and which one is current, so that the outcome of one
/// superseded by a second reload is ignored.
struct WindowRecompute {
    /// When the current recompute began (monotonic ms); nil when none runs.
    private(set) var startedAt: Int64?
    /// The last recompute started.
    private(set) var generation = 0

    var isRunning: Bool { startedAt != nil }

    /// Starts one at `now`; returns its generation.
    mutating func start(now: Int64) -> Int {
        startedAt = now
        generation += 1
        return generation
    }

    /// The current recompute ended with `generation`: returns when it began, nil for an outcome that is not the
    /// current one's (ignored).
    mutating func finish(generation finished: Int) -> Int64? {
        guard let startedAt, finished == generation else { return nil }
        self.startedAt = nil
        return startedAt
    }

    /// The drain gave up on it.
    mutating func abandon() { startedAt = nil }
}
