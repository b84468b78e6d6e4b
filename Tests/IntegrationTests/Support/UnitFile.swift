import Foundation

/// The repository checkout the tests were built from (for `systemd/`, `scripts/` and `Tests/Tools/`).
enum Repository {
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }  // Tests/IntegrationTests/Support/UnitFile.swift
        return url.path
    }()

    static func file(_ relative: String) -> String { "\(root)/\(relative)" }
}

/// One unit file from `systemd/`, read as simple `Key=Value` lines (our units use no continuation lines).
struct UnitFile {
    /// The names of the units in `systemd/`.
    static let names = [
        "offertrackd.socket", "offertrackd.service", "offertrack-export.service", "offertrack-export.timer",
        "offertrack-backup.service", "offertrack-backup.timer", "offertrack-payouts.service",
        "offertrack-payouts.timer", "offertrack-seal.service", "offertrack-seal.timer",
    ]

    let name: String
    let text: String

    init(_ name: String) throws {
        self.name = name
        text = try String(contentsOfFile: Repository.file("systemd/\(name)"), encoding: .utf8)
    }

    /// Every value assigned to `key`, in file order.
    func values(_ key: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { return nil }
            guard trimmed[..<equals] == key else { return nil }
            return String(trimmed[trimmed.index(after: equals)...])
        }
    }

    /// The last value assigned to `key` (the one systemd uses for single-valued settings).
    func value(_ key: String) -> String? { values(key).last }

    /// A command line split into words; our units use no quoting, which this checks.
    func command(_ key: String) -> [String]? {
        guard let line = value(key), !line.contains("\""), !line.contains("'") else { return nil }
        return line.split(separator: " ").map(String.init)
    }

    /// A time span such as `30s`, `5min` or `1h`, in seconds.
    static func seconds(_ span: String) -> Double? {
        let units: [(String, Double)] = [("min", 60), ("ms", 0.001), ("s", 1), ("h", 3600)]
        for (suffix, factor) in units where span.hasSuffix(suffix) {
            return Double(span.dropLast(suffix.count)).map { $0 * factor }
        }
        return Double(span)
    }
}
