/// Two variants measured in alternation (with, without, with, without, ...), so that the machine's drift
/// between runs (±15% on a shared VM) lands on both sides of each ratio instead of between them.
struct PairedRuns {
    let with: [Double]
    let without: [Double]

    /// Runs `pairs` pairs, `with` first in each.
    static func measure(pairs: Int, with: () throws -> Double, without: () throws -> Double) throws -> PairedRuns {
        var withRates: [Double] = []
        var withoutRates: [Double] = []
        for _ in 0..<max(1, pairs) {
            withRates.append(try with())
            withoutRates.append(try without())
        }
        return PairedRuns(with: withRates, without: withoutRates)
    }

    /// `with / without` of each pair.
    var ratios: [Double] { zip(with, without).map { $0 / $1 } }

    var medianRatio: Double { Self.median(ratios) }
    var medianWith: Double { Self.median(with) }
    var medianWithout: Double { Self.median(without) }

    var ratiosDescription: String { ratios.map(Format.ratio).joined(separator: ", ") }

    var runsDescription: String {
        "runs: " + with.map(Format.grouped).joined(separator: ", ") + " (without: "
            + without.map(Format.grouped).joined(separator: ", ") + ")"
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
