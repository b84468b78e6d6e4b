import Synchronization

/// A Prometheus histogram with fixed bucket bounds: an observation is two relaxed atomic adds and one for its
/// bucket, with no lock and no allocation.
///
/// Values are kept as integers of `unit` (a microsecond for seconds, 1 for counts) so the sum stays exact; the
/// exposition divides by `scale`.
public final class Histogram: Sendable {
    /// Upper bounds of the buckets, in the histogram's integer units, ascending (`+Inf` is implied).
    public let bounds: [UInt64]
    /// How many integer units make one exposed unit (1_000_000 for seconds observed in microseconds).
    public let scale: UInt64
    private let buckets: [Counter]
    private let count = Counter()
    private let sum = Counter()

    public init(bounds: [UInt64], scale: UInt64 = 1) {
        self.bounds = bounds
        self.scale = scale
        buckets = bounds.map { _ in Counter() } + [Counter()]
    }

    /// Records one observation of `value` integer units.
    public func observe(_ value: UInt64) {
        var index = 0
        while index < bounds.count && value > bounds[index] { index += 1 }
        buckets[index].increment()
        count.increment()
        sum.increment(by: value)
    }

    /// The cumulative counts per bound (the last for `+Inf`), the total count and the sum, read at once.
    public func snapshot() -> (cumulative: [UInt64], count: UInt64, sum: UInt64) {
        var running: UInt64 = 0
        let cumulative = buckets.map { bucket -> UInt64 in
            running += bucket.current
            return running
        }
        // `+Inf` equals the count by construction of the exposition, whatever raced with the reads.
        return (cumulative, running, sum.current)
    }
}
