import OfferTrackDomain
import Simulator

/// The tests' seeded generator is the simulator's SplitMix64 (`SimulationRandom`): shuffles are seeded, and the
/// seed printed, so that a failing order can be replayed.
public typealias SeededGenerator = SimulationRandom

extension SimulationRandom {
    /// A fresh seed, printed with `label` so that a failure can be replayed with it.
    public static func announced(_ label: String) -> SimulationRandom {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("\(label): shuffle seed \(seed) (replay with SeededGenerator(seed: \(seed)))")
        return SimulationRandom(seed: seed)
    }
}
