import Foundation
import TestSupport
import Testing

/// No test switches in what ships (issue 46): the tests' fault-injection hooks exist only in debug builds
/// (`OFFERTRACK_FAULT_HOOKS`, Package.swift), so the packaged release binaries hold none of their names.
extension PackageTests {
    /// What marks a test switch in a binary: every `"OFFERTRACK_TEST_…"` and `"OFFERTRACKD_TEST_…"` string literal
    /// in Sources/ (a switch's environment variable), `synchronous=OFF`'s raw value and the hooks' SIGKILL message.
    static func testSwitchNames() throws -> [String] {
        let sources = Repository.file("Sources")
        let files = try FileManager.default.subpathsOfDirectory(atPath: sources).filter { $0.hasSuffix(".swift") }
        let literal = try NSRegularExpression(pattern: #""(OFFERTRACKD?_TEST_[A-Z0-9_]+)""#)
        var names: Set<String> = ["unsafe-off-for-tests", "test hook: SIGKILL"]
        for file in files {
            let text = try String(contentsOfFile: "\(sources)/\(file)", encoding: .utf8)
            for match in literal.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                if let range = Range(match.range(at: 1), in: text) { names.insert(String(text[range])) }
            }
        }
        return names.sorted()
    }

    /// Which of `names` occur in the file at `path`, byte for byte (`grep -aoF`).
    static func occurrences(of names: [String], in path: String) throws -> Set<String> {
        let grep = try Shell.run("/bin/grep", ["-aoF"] + names.flatMap { ["-e", $0] } + [path])
        #expect(grep.status == 0 || grep.status == 1, "grep: \(grep.output)")
        return grep.status == 0 ? Set(grep.output.split(separator: "\n").map(String.init)) : []
    }

    /// The package's binaries hold no switch's name, while the debug binaries the tests run hold every one (so the
    /// search would see a switch that reached the release build).
    @Test func theReleaseBinariesCarryNoTestSwitch() throws {
        let names = try Self.testSwitchNames()
        // The export's five, the migration's two, the rename's three, synchronous=OFF's, and the two markers.
        #expect(names.count >= 13, "\(names)")
        let debug = try Self.occurrences(of: names, in: Binaries.daemon)
            .union(Self.occurrences(of: names, in: Binaries.cli))
        #expect(debug == Set(names), "not in the debug binaries: \(Set(names).subtracting(debug).sorted())")
        guard let package = Self.package() else { return }
        let directory = ScratchDirectory()
        #expect(try Shell.run("/usr/bin/dpkg-deb", ["--extract", package, directory.path]).status == 0)
        for binary in ["offertrackd", "offertrack"] {
            let found = try Self.occurrences(of: names, in: directory.file("usr/bin/\(binary)"))
            #expect(found.isEmpty, "the packaged \(binary) holds test switches: \(found.sorted())")
        }
    }
}
