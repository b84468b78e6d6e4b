import Synchronization

/// A monotonically increasing count, shared between threads: one relaxed atomic add per increment.
public final class Counter: Sendable {
    private let value = Atomic<UInt64>(0)

    public init() {}

    /// Adds `amount` (1 by default).
    public func increment(by amount: UInt64 = 1) {
        value.wrappingAdd(amount, ordering: .relaxed)
    }

    /// Sets the count to `total`, a count its owner keeps (and only ever raises) on its own thread.
    public func store(_ total: UInt64) {
        value.store(total, ordering: .relaxed)
    }

    public var current: UInt64 { value.load(ordering: .relaxed) }
}

/// A value that goes up and down or is set outright (connections, queued records, the last seq).
public final class Gauge: Sendable {
    private let value = Atomic<Int64>(0)

    public init() {}

    public func set(_ newValue: Int64) { value.store(newValue, ordering: .relaxed) }

    public func add(_ delta: Int64) { value.wrappingAdd(delta, ordering: .relaxed) }

    public var current: Int64 { value.load(ordering: .relaxed) }
}
