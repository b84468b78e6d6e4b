import OfferTrackDomain

/// A scalable Bloom filter of user names (by exact UTF-8 bytes): `mayContain` is false only for a user never
/// inserted. False positives, about 1% per layer, only cost the caller the exact check it would make anyway.
///
/// Layers double in capacity as users arrive, so the filter never needs its users again to grow.
package struct UserFilter {
    private struct Layer {
        var words: [UInt64]
        /// The number of bits minus one (bits are a power of two).
        let mask: UInt64
        let capacity: Int
        var count = 0

        init(capacity: Int) {
            self.capacity = capacity
            var bits = 64
            while bits < capacity * UserFilter.bitsPerUser { bits *= 2 }
            words = [UInt64](repeating: 0, count: bits / 64)
            mask = UInt64(bits - 1)
        }
    }

    /// 10 bits and 7 probes per user: a false-positive rate under 1% for a full layer.
    static let bitsPerUser = 10
    static let probes = 7

    private var layers: [Layer]

    /// A filter whose first layer holds `expectedUsers` before it grows.
    init(expectedUsers: Int) {
        layers = [Layer(capacity: max(1024, expectedUsers))]
    }

    /// How many users it holds (those taken for repeats by a false positive not included).
    var count: Int { layers.reduce(0) { $0 + $1.count } }

    /// The memory its bits take.
    var byteCount: Int { layers.reduce(0) { $0 + $1.words.count * 8 } }

    /// Adds `user` unless `mayContain` would already say yes; returns whether it did.
    @discardableResult
    mutating func insert(_ user: String) -> Bool {
        let (first, step) = Self.hashes(user)
        guard !mayContain(first: first, step: step) else { return false }
        if let last = layers.last, last.count >= last.capacity {
            layers.append(Layer(capacity: last.capacity * 2))
        }
        let index = layers.count - 1
        var position = first
        for _ in 0..<Self.probes {
            let bit = position & layers[index].mask
            layers[index].words[Int(bit >> 6)] |= 1 << (bit & 63)
            position &+= step
        }
        layers[index].count += 1
        return true
    }

    /// False when `user` was certainly never inserted.
    package func mayContain(_ user: String) -> Bool {
        let (first, step) = Self.hashes(user)
        return mayContain(first: first, step: step)
    }

    private func mayContain(first: UInt64, step: UInt64) -> Bool {
        layers: for layer in layers {
            var position = first
            for _ in 0..<Self.probes {
                let bit = position & layer.mask
                if layer.words[Int(bit >> 6)] & (1 << (bit & 63)) == 0 { continue layers }
                position &+= step
            }
            return true
        }
        return false
    }

    /// Two independent-enough 64-bit hashes of the user's bytes (double hashing); the step is odd, so the probes
    /// of one user never repeat a bit within a layer's power-of-two size.
    static func hashes(_ user: String) -> (first: UInt64, step: UInt64) {
        let first = ByteHash.hash(user)
        return (first, ByteHash.mix(first ^ 0x9E37_79B9_7F4A_7C15) | 1)
    }
}
