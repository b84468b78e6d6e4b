import Foundation
import Testing

/// The package's arrows (issue #33): what each module imports, checked against `Package.swift` and the arrows of
/// ARCHITECTURE.md, the lines that must never appear, and where the environment may be read; and where the tests'
/// shared helpers live (issue 46).
@Suite struct StructureTests {
    let layout: PackageLayout

    init() throws { layout = try PackageLayout.load() }

    /// (a) A file imports only package modules its target lists (system modules aside).
    @Test func everyFileImportsOnlyWhatItsTargetLists() throws {
        var problems: [String] = []
        for target in layout.targets {
            for (file, imports) in try layout.imports(of: target) {
                for module in imports where layout.isModule(module) && !target.dependencies.contains(module) {
                    problems.append("\(file) imports \(module), which target \(target.name) does not list")
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    /// (b) Every import of a module and every target it lists is one of its arrows in ARCHITECTURE.md, and its
    /// package modules there are exactly its targets: the document and the code show the same arrows.
    @Test func importsAndTargetsAreTheArrowsOfArchitectureMD() throws {
        let arrows = try Arrows.load(layout.root)
        var problems: [String] = []
        for target in layout.targets where !target.isTest && target.hasSwift {
            guard let allowed = arrows.allowed[target.name] else {
                problems.append("ARCHITECTURE.md's arrows have no line for \(target.name)")
                continue
            }
            let listed = Set(allowed.filter(layout.isModule))
            if listed != Set(target.dependencies) {
                problems.append(
                    "\(target.name): Package.swift lists \(target.dependencies.sorted()), ARCHITECTURE.md "
                        + "\(listed.sorted())")
            }
            for (file, imports) in try layout.imports(of: target) {
                for module in imports where !allowed.contains(module) {
                    problems.append("\(file) imports \(module): no arrow \(target.name) → \(module)")
                }
            }
        }
        for name in arrows.allowed.keys where !layout.targets.contains(where: { $0.name == name }) {
            problems.append("ARCHITECTURE.md has arrows for \(name), which Package.swift does not build")
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    /// (b) The arrows that must never appear, whatever the lists say.
    @Test func theForbiddenArrowsAppearNowhere() throws {
        var problems: [String] = []
        for target in layout.targets {
            var imported = Set(target.dependencies)
            for (_, imports) in try layout.imports(of: target) { imported.formUnion(imports) }
            for module in imported where Forbidden.forbids(target.name, module) {
                problems.append("\(target.name) → \(module)")
            }
        }
        #expect(problems.isEmpty, "forbidden arrows: \(problems.joined(separator: ", "))")
    }

    /// (c) The environment is read by the executables (and `Posix`, which wraps `getenv`), never by a library.
    @Test func onlyTheExecutablesReadTheEnvironment() throws {
        var readers: [String] = []
        for target in layout.targets where !target.isTest && target.directory.hasPrefix("Sources/") {
            for file in try layout.swiftFiles(of: target) where !Forbidden.mayReadEnvironment(file) {
                let text = try String(contentsOfFile: layout.root + "/" + file, encoding: .utf8)
                if Forbidden.readsEnvironment(text) { readers.append(file) }
            }
        }
        let pending = Set(Forbidden.pendingEnvironmentReads)
        #expect(Set(readers).subtracting(pending).isEmpty, "the environment is read in \(readers.sorted())")
        #expect(
            pending.isSubset(of: Set(readers)),
            "no longer read, drop from pendingEnvironmentReads: \(pending.subtracting(readers).sorted())")
    }

    /// (d) A test file uses no helper of a suite declared in another file: helpers shared by suites live in a
    /// support file (`Tests/TestSupport`, a target's `Support/`).
    @Test func noTestFileBorrowsAHelperOfAnotherFilesSuite() throws {
        var uses: [String] = []
        for target in layout.targets where target.directory.hasPrefix("Tests/") {
            let files = try layout.swiftFiles(of: target).map { file in
                (path: file, text: try String(contentsOfFile: layout.root + "/" + file, encoding: .utf8))
            }
            uses += SuiteHelpers.borrowed(in: files)
        }
        #expect(uses.isEmpty, "helpers of another file's suite, for a support file:\n\(uses.joined(separator: "\n"))")
    }

    /// The checks see what they check: a file that imports a forbidden module, reads the environment or borrows
    /// another file's suite's helper is caught.
    @Test func theChecksCatchWhatTheyLookFor() {
        #expect(
            PackageLayout.imports(in: "import Foundation\n@testable import JournalStore\nimport struct SQLite.Row\n")
                == ["Foundation", "JournalStore", "SQLite"])
        for module in Forbidden.journal {
            #expect(Forbidden.forbids(module, "OutputFormats") && Forbidden.forbids(module, "WireFormat"))
            #expect(Forbidden.forbids(module, "Publishing") && Forbidden.forbids(module, "Fleet"))
        }
        #expect(
            Forbidden.forbids("JournalStore", "AttributionJoin") && Forbidden.forbids("JournalStore", "PublishedLedger")
        )
        #expect(
            Forbidden.forbids("AttributionJoin", "PublishedLedger")
                && !Forbidden.forbids("PublishedLedger", "AttributionJoin"))
        #expect(
            Forbidden.forbids("PublishedLedger", "JournalVerification")
                && !Forbidden.forbids("JournalVerification", "JournalStore"))
        #expect(Forbidden.forbids("Fleet", "SQLite") && Forbidden.forbids("JournalStore", "CSQLite"))
        #expect(!Forbidden.forbids("SQLite", "CSQLite") && !Forbidden.forbids("Posix", "CLinux"))
        #expect(Forbidden.readsEnvironment("let x = CurrentProcess.environment(\"A\")"))
        #expect(Forbidden.readsEnvironment("guard let v = getenv(name)"))
        #expect(!Forbidden.readsEnvironment("// the environment is read by main.swift"))
        let suites = [
            (path: "A.swift", text: "@Suite struct ATests {\n    static func helper() {}\n}"),
            (path: "A+More.swift", text: "extension ATests {\n    @Test func t() { ATests.helper() }\n}"),
            (path: "B.swift", text: "struct BTests {\n    typealias H = ATests\n    func t() { ATests.helper() }\n}"),
            (path: "C.swift", text: "// ATests.helper() in a comment, ATests.self\nlet t = ATests.self"),
        ]
        #expect(
            SuiteHelpers.borrowed(in: suites) == [
                "B.swift:2: typealias H = ATests", "B.swift:3: func t() { ATests.helper() }",
            ])
    }
}
