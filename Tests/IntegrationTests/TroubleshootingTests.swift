import Foundation
import TestSupport
import Testing

/// docs/troubleshooting.md against what exists: it has a row for every alert of monitoring/alerts.yml, and every
/// log line it lists is one the sources write, at the priority it says.
@Suite struct TroubleshootingTests {
    static let page = Repository.file("docs/troubleshooting.md")

    @Test func everyAlertHasARow() throws {
        let text = try String(contentsOfFile: Self.page, encoding: .utf8)
        let rules = try String(contentsOfFile: Repository.file("monitoring/alerts.yml"), encoding: .utf8)
        let alerts = rules.split(separator: "\n").compactMap { line in
            line.trimmingCharacters(in: .whitespaces).split(separator: " ").dropFirst(2).first.flatMap {
                line.contains("- alert: ") ? String($0) : nil
            }
        }
        #expect(alerts.count >= 10)
        let rows = text.split(separator: "\n").filter { $0.hasPrefix("| `OfferTrack") }.joined(separator: "\n")
        for alert in alerts { #expect(rows.contains("`\(alert)`"), "no row for \(alert)") }
    }

    /// Every Swift source file's text, joined.
    static func sources() throws -> String {
        var texts: [String] = []
        let root = Repository.file("Sources")
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let file = enumerator?.nextObject() as? String {
            guard file.hasSuffix(".swift") else { continue }
            texts.append(try String(contentsOfFile: "\(root)/\(file)", encoding: .utf8))
        }
        return texts.joined(separator: "\n")
    }

    @Test func everyLogLineListedIsWrittenAtItsPriority() throws {
        let text = try String(contentsOfFile: Self.page, encoding: .utf8)
        let sources = try Self.sources()
        // How a call names its priority; the central consumer's refusals go through `logRefusal`, at warning.
        let calls = [
            "err": [".error("], "warning": [".warning(", "logRefusal("], "notice": [".notice("], "info": [".info("],
        ]
        let everyCall = calls.values.flatMap { $0 }
        var rows = 0
        var checkedPriorities = 0
        for line in text.split(separator: "\n") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count > 3, let wanted = calls[cells[1]] else { continue }
            let spans = cells[2].split(separator: "`", omittingEmptySubsequences: false)
            guard spans.count > 1 else { continue }
            // The line's fixed start, as a string literal begins in the sources.
            let start = "\"" + spans[1].replacingOccurrences(of: "\"", with: "\\\"")
            rows += 1
            // Every literal that starts so, and the call each is given to when it is given to one directly (the
            // nearest call before it, with no `return` or `}` between).
            var rest = sources[...]
            var found = 0
            var given: [String] = []
            while let range = rest.range(of: start) {
                found += 1
                let lower = sources.index(range.lowerBound, offsetBy: -160, limitedBy: sources.startIndex)
                let before = sources[(lower ?? sources.startIndex)..<range.lowerBound]
                let nearest = everyCall.compactMap { call in
                    before.range(of: call, options: .backwards).map { (at: $0.upperBound, call: call) }
                }.max { $0.at < $1.at }
                if let nearest, !before[nearest.at...].contains("return"), !before[nearest.at...].contains("}") {
                    given.append(nearest.call)
                }
                rest = sources[range.upperBound...]
            }
            #expect(found > 0, "no string literal starts with \(spans[1]) in Sources (\(cells[1]))")
            guard !given.isEmpty else { continue }
            checkedPriorities += 1
            #expect(given.contains { wanted.contains($0) }, "\(spans[1]) is logged with \(given), not at \(cells[1])")
        }
        #expect(rows >= 30, "only \(rows) log lines")
        #expect(checkedPriorities >= 20, "only \(checkedPriorities) priorities checked")
    }
}
