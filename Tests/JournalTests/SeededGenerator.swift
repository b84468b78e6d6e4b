/// A small deterministic generator (SplitMix64): shuffles are seeded, and the seed printed, so that a failing
/// order can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    /// A fresh seed, printed with `label` so that a failure can be replayed with it.
    static func announced(_ label: String) -> SeededGenerator {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("\(label): shuffle seed \(seed) (replay with SeededGenerator(seed: \(seed)))")
        return SeededGenerator(seed: seed)
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
