import OfferTrackDomain

/// SplitMix64: a small seeded generator whose output is identical on every machine and Swift version.
///
/// Draws use only this type's own arithmetic (never the standard library's `random(in:)`, whose algorithm may
/// change), so a seed always gives the same workload. Tests use it as a seeded `RandomNumberGenerator` too.
public struct SimulationRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// A value in `0..<bound` (`bound` > 0), by multiply-high.
    mutating func below(_ bound: UInt64) -> UInt64 {
        bound.multipliedFullWidth(by: next()).high
    }

    /// An `Int64` in `range`.
    mutating func int(in range: ClosedRange<Int64>) -> Int64 {
        range.lowerBound + Int64(below(UInt64(range.upperBound - range.lowerBound) + 1))
    }

    /// True with probability `percent`/100.
    mutating func chance(_ percent: UInt64) -> Bool { below(100) < percent }

    /// A uniformly chosen element of a non-empty array.
    mutating func pick<T>(_ items: [T]) -> T { items[Int(below(UInt64(items.count)))] }

    /// SplitMix64's finalizer, a bijection on `UInt64`.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
