import Foundation
import TestSupport
import Testing

/// The rules file's reference (docs/rules.md and offertrack-rules(5)) against the rules reader and the binary:
/// every key the reader knows is in both, with an example the binary accepts; the malformed examples are refused
/// with exit 78 naming the key; the example file shown is the one the package installs.
@Suite struct RulesReferenceTests {
    static let page = Repository.file("docs/rules.md")
    static let manual = Repository.file("man/offertrack-rules.5")

    /// The keys in the `known` lists of the rules reader (top level first, then a rule's), read from its source.
    static func readerKeys() throws -> (topLevel: Set<String>, rule: Set<String>) {
        let source = try String(
            contentsOfFile: Repository.file("Sources/WireFormat/CommissionRulesLoading.swift"), encoding: .utf8)
        let lists = source.components(separatedBy: "let known = [").dropFirst().map {
            Set(
                $0.components(separatedBy: "]")[0].split(separator: "\"", omittingEmptySubsequences: false)
                    .enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
        }
        guard lists.count == 2 else { throw Failure("the rules reader has \(lists.count) known-key lists, not 2") }
        return (lists[0], lists[1])
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The rows of the table of docs/rules.md under `heading` (`## Top-level keys`): (key, example) from the first
    /// and last cells' code spans.
    static func table(under heading: String) throws -> [(key: String, example: String)] {
        let text = try String(contentsOfFile: page, encoding: .utf8)
        let section = text.components(separatedBy: "\n\(heading)\n")[1].components(separatedBy: "\n## ")[0]
        return section.split(separator: "\n").filter { $0.hasPrefix("| `") }.map { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            func span(_ cell: String) -> String {
                let parts = cell.split(separator: "`", omittingEmptySubsequences: false)
                return parts.count > 1 ? String(parts[1]) : ""
            }
            return (span(cells[1]), span(cells[cells.count - 2]))
        }
    }

    /// `offertrack rules check` on a file with `text`.
    static func check(_ text: String, in directory: ScratchDirectory, name: String = "rules.json") throws
        -> Shell.Outcome
    {
        let path = directory.file(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return try Shell.run(Binaries.cli, ["rules", "check", path])
    }

    @Test func everyKeyTheReaderKnowsIsDocumentedWithAnExampleTheBinaryAccepts() throws {
        let known = try Self.readerKeys()
        // retentionDays (SPEC v6 section 12) is documented before the reader knows it.
        let topLevel = try Self.table(under: "## Top-level keys")
        let rule = try Self.table(under: "## Rule objects")
        #expect(Set(topLevel.map(\.key)) == known.topLevel.union(["retentionDays"]), "\(topLevel.map(\.key))")
        #expect(Set(rule.map(\.key)) == known.rule, "\(rule.map(\.key))")
        let manual = try String(contentsOfFile: Self.manual, encoding: .utf8)
        for key in known.topLevel.union(known.rule).union(["retentionDays"]) {
            #expect(manual.contains("\n.BR \(key) ") || manual.contains(#"", " \#(key) ""#), "man page: \(key)")
        }
        let directory = ScratchDirectory()
        for (key, example) in topLevel where known.topLevel.contains(key) && !["currency", "rules"].contains(key) {
            let outcome = try Self.check(#"{"currency": "USD", "rules": [], "\#(key)": \#(example)}"#, in: directory)
            #expect(outcome.status == 0 && outcome.output.contains(": valid: "), "\(key): \(outcome.output)")
        }
        for (key, example) in rule {
            var members = ["affiliateToken": #""x""#, "amountMinor": "1"]
            members[key] = example
            let fields =
                members
                .map { #""\#($0.key)": \#($0.value)"# }.sorted().joined(separator: ", ")
            let outcome = try Self.check(#"{"currency": "USD", "rules": [{\#(fields)}]}"#, in: directory)
            #expect(outcome.status == 0, "\(key): \(outcome.output)")
        }
        // A key the tables do not name is refused.
        let unknown = try Self.check(#"{"currency": "USD", "rules": [], "holdingPeriod": 1}"#, in: directory)
        #expect(unknown.status == 78 && unknown.output.contains("(at holdingPeriod)"), "\(unknown.output)")
    }

    @Test func theMalformedExamplesAreRefusedNamingTheirKey() throws {
        let examples = try Self.table(under: "## What makes a file malformed").filter { $0.key.hasPrefix("{") }
        #expect(examples.count >= 5, "\(examples)")
        let directory = ScratchDirectory()
        for (file, key) in examples {
            let outcome = try Self.check(file, in: directory)
            #expect(outcome.status == 78, "\(file): \(outcome.output)")
            #expect(outcome.output.contains("(at \(key)"), "\(file) does not name \(key): \(outcome.output)")
        }
    }

    @Test func theExampleShownIsTheInstalledOneAndIsValid() throws {
        let installed = try String(
            contentsOfFile: Repository.file("systemd/rules.example.json"), encoding: .utf8)
        let text = try String(contentsOfFile: Self.page, encoding: .utf8)
        let shown = text.components(separatedBy: "```json\n")[1].components(separatedBy: "```")[0]
        #expect(shown == installed)
        let manual = try String(contentsOfFile: Self.manual, encoding: .utf8)
        let inManual = manual.components(separatedBy: ".nf\n")[1].components(separatedBy: ".fi\n")[0]
        #expect(inManual.replacingOccurrences(of: #"\-"#, with: "-") == installed)
        let outcome = try Shell.run(Binaries.cli, ["rules", "check", Repository.file("systemd/rules.example.json")])
        #expect(outcome.status == 0, "\(outcome.output)")
    }
}
