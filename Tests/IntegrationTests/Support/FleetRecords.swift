import OfferTrackDomain
import Simulator

/// Record lines for the fleet tests, chosen by partition or simulated, and a stream message of several.
enum FleetRecords {
    /// Records of `users` users (seeded), without the simulator's deliberate duplicates.
    static func simulated(users: Int, seed: UInt64) -> [String] {
        Array(
            WorkloadSimulator(users: users, seed: seed).filter { !$0.isDuplicate && $0.record.type != .erasure }.map(
                \.line))
    }

    /// Records of partition-0 users (`u-…` of 4 partitions) with ids `prefix-N`.
    static func inPartitionZero(_ prefix: String, _ count: Int) -> [String] {
        let users = (0...).lazy.map { "u-\($0)" }.filter { Partition.of(user: $0, total: 4) == 0 }.prefix(50)
        let names = Array(users)
        return (0..<count).map { TestRecords.capabilities(id: "\(prefix)-\($0)", user: names[$0 % names.count]) }
    }

    /// A user of `partition` among `total` (the first `u-N` that falls there).
    static func user(in partition: Int, of total: Int) -> String {
        (0...).lazy.map { "u-\($0)" }.first { Partition.of(user: $0, total: total) == partition } ?? ""
    }

    /// `lines` as one message: each followed by `\n`.
    static func payload(_ lines: [String]) -> [UInt8] {
        Array(lines.map { $0 + "\n" }.joined().utf8)
    }
}
