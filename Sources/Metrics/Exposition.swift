/// Writes metrics in the Prometheus text exposition format 0.0.4: `# HELP` and `# TYPE` once per family, then
/// its samples.
public struct Exposition {
    public private(set) var text = ""

    public init() {}

    /// A counter family with one sample per label value (`labels` empty: one unlabelled sample).
    public mutating func counter(
        _ name: String, help: String, label: String? = nil, _ samples: [(String, UInt64)]
    ) {
        family(name, help: help, type: "counter")
        for (value, count) in samples {
            text += name + labels(label.map { [($0, value)] } ?? []) + " \(count)\n"
        }
    }

    /// A counter with one unlabelled sample, `value / scale` in exposed units (milliseconds as seconds: 1,000).
    public mutating func counter(_ name: String, help: String, _ value: UInt64, scale: UInt64) {
        family(name, help: help, type: "counter")
        text += "\(name) \(Self.decimal(value, scale: scale))\n"
    }

    /// A gauge with one unlabelled sample.
    public mutating func gauge(_ name: String, help: String, _ value: Int64) {
        family(name, help: help, type: "gauge")
        text += "\(name) \(value)\n"
    }

    /// A histogram's buckets (`le` in exposed units), sum and count.
    public mutating func histogram(_ name: String, help: String, _ histogram: Histogram) {
        family(name, help: help, type: "histogram")
        let (cumulative, count, sum) = histogram.snapshot()
        for (index, bound) in histogram.bounds.enumerated() {
            text += "\(name)_bucket{le=\"\(Self.decimal(bound, scale: histogram.scale))\"} \(cumulative[index])\n"
        }
        text += "\(name)_bucket{le=\"+Inf\"} \(count)\n"
        text += "\(name)_sum \(Self.decimal(sum, scale: histogram.scale))\n"
        text += "\(name)_count \(count)\n"
    }

    private mutating func family(_ name: String, help: String, type: String) {
        text += "# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) \(type)\n"
    }

    private func labels(_ pairs: [(String, String)]) -> String {
        guard !pairs.isEmpty else { return "" }
        return "{" + pairs.map { "\($0.0)=\"\(Self.escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
    }

    /// `value / scale` written exactly in decimal (`1500 / 1_000_000` is `0.0015`), without floating point.
    static func decimal(_ value: UInt64, scale: UInt64) -> String {
        guard scale > 1 else { return String(value) }
        let whole = String(value / scale)
        var fraction = String(value % scale)
        let digits = String(scale - 1).count
        fraction = String(repeating: "0", count: digits - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? whole : whole + "." + fraction
    }

    static func escapeHelp(_ text: String) -> String {
        text.replacingAll("\\", with: "\\\\").replacingAll("\n", with: "\\n")
    }

    static func escapeLabel(_ text: String) -> String {
        text.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"").replacingAll("\n", with: "\\n")
    }
}

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for character in self { if character == target { out += replacement } else { out.append(character) } }
        return out
    }
}
