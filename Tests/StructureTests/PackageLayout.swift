import Foundation

/// The targets of `Package.swift` (name, directory, the package targets it depends on) and their files' imports.
struct PackageLayout {
    struct Target {
        let name: String
        let directory: String
        let dependencies: [String]
        let isTest: Bool
        let hasSwift: Bool
    }

    let root: String
    let targets: [Target]

    /// Reads the package this test is in.
    static func load(filePath: String = #filePath) throws -> PackageLayout {
        var root = URL(fileURLWithPath: filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }  // Tests/StructureTests/PackageLayout.swift
        let text = try String(contentsOfFile: root.path + "/Package.swift", encoding: .utf8)
        let targets = try parse(text).map { target in
            let files = (try? FileManager.default.subpathsOfDirectory(atPath: root.path + "/" + target.directory)) ?? []
            return Target(
                name: target.name, directory: target.directory, dependencies: target.dependencies,
                isTest: target.isTest, hasSwift: files.contains { $0.hasSuffix(".swift") })
        }
        return PackageLayout(root: root.path, targets: targets)
    }

    /// Whether `name` is one of the package's targets.
    func isModule(_ name: String) -> Bool { targets.contains { $0.name == name } }

    /// The Swift files of `target`, relative to the root, in order.
    func swiftFiles(of target: Target) throws -> [String] {
        let directory = root + "/" + target.directory
        guard FileManager.default.fileExists(atPath: directory) else { return [] }
        return try FileManager.default.subpathsOfDirectory(atPath: directory)
            .filter { $0.hasSuffix(".swift") }.sorted().map { target.directory + "/" + $0 }
    }

    /// Each Swift file of `target` with the modules it imports.
    func imports(of target: Target) throws -> [(file: String, imports: [String])] {
        try swiftFiles(of: target).map { file in
            (file, Self.imports(in: try String(contentsOfFile: root + "/" + file, encoding: .utf8)))
        }
    }

    /// The modules `source` imports (`import M`, `@testable import M`, `import struct M.T`, ...).
    static func imports(in source: String) -> [String] {
        let pattern =
            #"^\s*(?:@\w+\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+"#
            + #"(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)"#
        guard let regex = try? NSRegularExpression(pattern: pattern, options: [.anchorsMatchLines]) else { return [] }
        let range = NSRange(source.startIndex..., in: source)
        return regex.matches(in: source, range: range).compactMap { match in
            Range(match.range(at: 1), in: source).map { String(source[$0]) }
        }
    }

    /// The targets declared in `Package.swift`'s text (comments dropped).
    static func parse(_ text: String) throws -> [(
        name: String, directory: String, dependencies: [String], isTest: Bool
    )] {
        let code = text.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
        let declaration = try NSRegularExpression(pattern: #"\.(target|executableTarget|testTarget|systemLibrary)\("#)
        let matches = declaration.matches(in: code, range: NSRange(code.startIndex..., in: code))
        return try matches.enumerated().map { index, match in
            guard let start = Range(match.range, in: code), let kind = Range(match.range(at: 1), in: code) else {
                throw LayoutError("cannot read a target of Package.swift")
            }
            let end = index + 1 < matches.count ? Range(matches[index + 1].range, in: code)?.lowerBound : nil
            let body = String(code[start.upperBound..<(end ?? code.endIndex)])
            guard let name = firstString(after: "name:", in: body) else {
                throw LayoutError("a target of Package.swift without a name: \(body.prefix(80))")
            }
            let isTest = code[kind] == "testTarget"
            let directory = firstString(after: "path:", in: body) ?? (isTest ? "Tests/" : "Sources/") + name
            var dependencies: [String] = []
            if let list = body.range(of: "dependencies:"), let open = body[list.upperBound...].firstIndex(of: "["),
                let close = body[open...].firstIndex(of: "]")
            {
                dependencies = strings(in: String(body[open...close]))
            }
            return (name, directory, dependencies, isTest)
        }
    }

    private static func firstString(after label: String, in text: String) -> String? {
        guard let labelRange = text.range(of: label) else { return nil }
        return strings(in: String(text[labelRange.upperBound...])).first
    }

    private static func strings(in text: String) -> [String] {
        text.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }
}

/// What each module may import, as ARCHITECTURE.md's `arrows` block says: one line `Module → A, B, C` a module.
struct Arrows {
    let allowed: [String: Set<String>]

    static func load(_ root: String) throws -> Arrows {
        let text = try String(contentsOfFile: root + "/ARCHITECTURE.md", encoding: .utf8)
        guard let start = text.range(of: "```arrows\n"), let end = text[start.upperBound...].range(of: "```") else {
            throw LayoutError("ARCHITECTURE.md has no ```arrows block")
        }
        var allowed: [String: Set<String>] = [:]
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") {
            let sides = line.split(separator: "→", maxSplits: 1, omittingEmptySubsequences: false)
            guard sides.count == 2 else { throw LayoutError("ARCHITECTURE.md: not an arrow line: \(line)") }
            let module = sides[0].trimmingCharacters(in: .whitespaces)
            allowed[module] = Set(
                sides[1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        return Arrows(allowed: allowed)
    }
}

/// What must never appear, whatever the lists say (issue #33).
enum Forbidden {
    /// Each C module and its one wrapper, the only module that may import it.
    static let wrappers = ["CSQLite": "SQLite", "CSystemd": "Systemd", "CNATS": "NATS", "CLinux": "Posix"]
    /// The journal's modules, lowest first: each may import only those before it (ARCHITECTURE.md, "The journal's
    /// rooms").
    static let journal = [
        "JournalStore", "AttributionJoin", "JournalSealing", "PublishedLedger", "JournalVerification",
    ]
    /// Arrows that point the wrong way: the journal's modules render no files, parse no wire formats and hold no
    /// fleet code, and inside the journal every arrow points down (the store imports neither the join, the ledger
    /// nor verification; the join neither the ledger nor verification); the fleet writes no SQL.
    static let wrongWay: [String: Set<String>] = {
        var wrongWay: [String: Set<String>] = [
            "Fleet": ["SQLite"],
            "JSON": Set(["WireFormat"] + journal),
            "OfferTrackDomain": Set(["JSON", "WireFormat", "OutputFormats"] + journal),
        ]
        for (index, module) in journal.enumerated() {
            wrongWay[module] = Set(["OutputFormats", "WireFormat", "Publishing", "Fleet"] + journal[(index + 1)...])
        }
        return wrongWay
    }()
    /// Library files allowed to read the environment for now, each until it is moved to an executable's main: the
    /// check fails once one no longer does, so the list only shrinks. Empty: no library reads it.
    static let pendingEnvironmentReads: [String] = []

    static func forbids(_ module: String, _ imported: String) -> Bool {
        if let wrapper = wrappers[imported], wrapper != module { return true }
        return wrongWay[module]?.contains(imported) ?? false
    }

    /// The executables and the system-call wrapper may read the environment.
    static func mayReadEnvironment(_ file: String) -> Bool {
        file.hasPrefix("Sources/offertrack/") || file.hasPrefix("Sources/offertrackd/")
            || file.hasPrefix("Sources/Posix/")
    }

    /// Whether `source` reads the environment in code (comments aside).
    static func readsEnvironment(_ source: String) -> Bool {
        source.split(separator: "\n").contains { line in
            let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return code.contains("CurrentProcess.environment") || code.contains("getenv(")
                || code.contains("ProcessInfo.processInfo.environment") || code.contains("environ[")
        }
    }
}

struct LayoutError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
