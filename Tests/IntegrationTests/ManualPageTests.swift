import Foundation
import OfferTrackDomain
import TestSupport
import Testing

/// The manual pages in man/, written by hand: they render without a warning, have the sections an operator
/// looks for, and name every flag the binaries accept (and none they do not). What a binary accepts is asked of
/// the binary itself (`AcceptedFlags`), command by command, so a flag added to a parser without its page and
/// its `--help` fails here.
@Suite struct ManualPageTests {
    static let pages = ["man/offertrackd.8", "man/offertrack.1"]
    static let sections = [
        "NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "SIGNALS", "FILES", "ENVIRONMENT", "EXAMPLES",
        "SEE ALSO",
    ]

    @Test(arguments: pages) func renderWithoutWarningsAndHaveEverySection(page: String) throws {
        let path = Repository.file(page)
        let environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "MANWIDTH": "80"]
        // man's own warnings (and groff's, which it passes on) go to stderr: only stderr is kept here.
        let warnings = try Shell.run(
            "/bin/sh", ["-c", #"man --warnings -l "$0" 2>&1 >/dev/null"#, path], environment: environment)
        #expect(warnings.status == 0 && warnings.output.isEmpty, "\(page): \(warnings.output)")
        let strict = try Shell.run("/usr/bin/groff", ["-man", "-ww", "-z", path], environment: environment)
        #expect(strict.status == 0 && strict.output.isEmpty, "\(page): \(strict.output)")
        let rendered = try Shell.run("/usr/bin/man", ["-l", path], environment: environment)
        #expect(rendered.status == 0 && rendered.output.contains("SYNOPSIS"), "\(page): \(rendered.output)")

        let source = try String(contentsOfFile: path, encoding: .utf8)
        let headings = source.split(separator: "\n").filter { $0.hasPrefix(".SH ") }.map {
            $0.dropFirst(4).trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        }
        #expect(headings == Self.sections, "\(page): \(headings)")
        #expect(source.contains("\"offertrack \(OfferTrackVersion.string)\""), "\(page): .TH names another release")
    }

    /// The flags in a part of a page's roff source (`\-\-db`, `\fB\-\-db\fR`, `.BR \-\-db`).
    static func flags(inRoff text: Substring) -> Set<String> {
        let plain = text.replacingOccurrences(of: #"\-"#, with: "-").replacingOccurrences(of: #"\&"#, with: "")
            .replacingOccurrences(of: #"\\f[BIRP]"#, with: "", options: .regularExpression)
        return AcceptedFlags.flags(in: plain)
    }

    /// The page's `.SS` subsections by name (the text up to the next `.SS` or `.SH`).
    static func subsections(ofRoff source: String) -> [String: Substring] {
        var result: [String: Substring] = [:]
        var lines = source.split(separator: "\n", omittingEmptySubsequences: false)[...]
        while let line = lines.popFirst() {
            guard line.hasPrefix(".SS ") else { continue }
            let body = lines.prefix { !$0.hasPrefix(".SS ") && !$0.hasPrefix(".SH ") }
            result[String(line.dropFirst(4))] = Substring(body.joined(separator: "\n"))
        }
        return result
    }

    @Test func theDaemonsPageAndHelpNameExactlyTheFlagsItAccepts() throws {
        let accepted = AcceptedFlags.daemon
        #expect(accepted.isSuperset(of: ["--socket", "--db", "--forward", "--help", "-h"]), "\(accepted.sorted())")
        let source = try String(contentsOfFile: Repository.file("man/offertrackd.8"), encoding: .utf8)
        let options = source.components(separatedBy: "\n.SH OPTIONS\n")[1].components(separatedBy: "\n.SH ")[0]
        let documented = Self.flags(inRoff: Substring(options))
        #expect(
            accepted.subtracting(documented).isEmpty, "not in OPTIONS: \(accepted.subtracting(documented).sorted())")
        let named = Self.flags(inRoff: Substring(source))
        #expect(named.subtracting(accepted).isEmpty, "named but not accepted: \(named.subtracting(accepted).sorted())")
        let help = AcceptedFlags.flags(in: try Shell.run(Binaries.daemon, ["--help"]).output)
        #expect(accepted.subtracting(help).isEmpty, "not in --help: \(accepted.subtracting(help).sorted())")
    }

    @Test func theCLIsPageAndHelpNameExactlyTheFlagsEachCommandAccepts() throws {
        let source = try String(contentsOfFile: Repository.file("man/offertrack.1"), encoding: .utf8)
        let subsections = Self.subsections(ofRoff: source)
        let common = Self.flags(inRoff: subsections["Options of every command"] ?? "")
        #expect(common == ["--db", "--rules", "--help"], "\(common.sorted())")
        let topLevel = AcceptedFlags.topLevel
        #expect(topLevel == ["--help", "-h", "--version"], "\(topLevel.sorted())")
        let synopsis = source.components(separatedBy: "\n.SH SYNOPSIS\n")[1].components(separatedBy: "\n.SH ")[0]
        #expect(Self.flags(inRoff: Substring(synopsis)).isSuperset(of: topLevel))
        for command in AcceptedFlags.commands {
            let accepted = AcceptedFlags.byCommand[command] ?? []
            #expect(accepted.isSuperset(of: common), "\(command): \(accepted.sorted())")
            guard let section = subsections[command] else {
                Issue.record("no .SS \(command) in offertrack(1)")
                continue
            }
            let documented = Self.flags(inRoff: section).union(common)
            #expect(
                accepted.subtracting(documented).isEmpty,
                "offertrack \(command): not in its section: \(accepted.subtracting(documented).sorted())")
            #expect(
                documented.subtracting(accepted).isEmpty,
                "offertrack \(command): in its section but not accepted: \(documented.subtracting(accepted).sorted())")
            // `--help` prints this text; every other accepted flag is in it.
            let help = AcceptedFlags.flags(in: try Shell.run(Binaries.cli, [command, "--help"]).output).union(["--help"]
            )
            #expect(
                accepted.subtracting(help).isEmpty,
                "offertrack \(command) --help lacks \(accepted.subtracting(help).sorted())")
        }
        #expect(Set(subsections.keys) == Set(AcceptedFlags.commands + ["Options of every command"]))
    }
}

/// The flags each binary and each `offertrack` command accepts, asked of the built binaries. The candidates are
/// every `--word` (and `-h`) written anywhere in Sources/, man/, docs/ or the README; each is given to the binary
/// followed by two flags nobody accepts, so that no command ever runs: an unknown candidate is refused by name
/// (`unknown option X`, `unknown argument X`), an accepted one is not (the error names the next argument, or a
/// value, instead). Asked once per test process.
enum AcceptedFlags {
    static let commands = [
        "report", "explain", "export", "payouts", "reconcile", "review", "erase", "ingest", "status", "forward",
        "rebuild",
        "verify", "backup", "simulate",
    ]
    static let probe = ["--no-such-flag-probe-1", "--no-such-flag-probe-2"]

    static let candidates: Set<String> = {
        var texts = [(try? String(contentsOfFile: Repository.file("README.md"), encoding: .utf8)) ?? ""]
        for root in ["Sources", "man", "docs"] {
            let enumerator = FileManager.default.enumerator(atPath: Repository.file(root))
            while let relative = enumerator?.nextObject() as? String {
                let path = Repository.file("\(root)/\(relative)")
                guard !relative.hasSuffix(".png"), let text = try? String(contentsOfFile: path, encoding: .utf8)
                else { continue }
                texts.append(text.replacingOccurrences(of: #"\-"#, with: "-"))
            }
        }
        return texts.reduce(into: ["-h"]) { $0.formUnion(flags(in: $1)) }
    }()

    /// Every `--flag` in `text` (`--flag=value` gives `--flag`), and `-h` where it stands alone.
    static func flags(in text: String) -> Set<String> {
        let characters = Array(text.unicodeScalars)
        func isWord(_ index: Int) -> Bool {
            guard index >= 0, index < characters.count else { return false }
            let scalar = characters[index]
            return scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-"
        }
        func isFlagCharacter(_ scalar: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "-" || scalar == "."
        }
        var found: Set<String> = []
        var index = 0
        while index < characters.count {
            defer { index += 1 }
            guard characters[index] == "-", !isWord(index - 1) else { continue }
            if index + 2 < characters.count, characters[index + 1] == "-", ("a"..."z").contains(characters[index + 2]) {
                var end = index + 2
                while end < characters.count, isFlagCharacter(characters[end]) { end += 1 }
                var flag = String(String.UnicodeScalarView(characters[index..<end]))
                while flag.hasSuffix(".") || flag.hasSuffix("-") { flag.removeLast() }
                found.insert(flag)
                index = end
            } else if index + 1 < characters.count, characters[index + 1] == "h", !isWord(index + 2) {
                found.insert("-h")
            }
        }
        return found
    }

    /// The candidates `arguments + [candidate] + probe` does not refuse by name.
    private static func accepted(
        _ binary: String, _ arguments: [String], among candidates: Set<String>, refusal: String
    )
        -> Set<String>
    {
        candidates.filter { candidate in
            guard let outcome = try? Shell.run(binary, arguments + [candidate] + probe) else { return false }
            return !outcome.output.split(separator: "\n").contains { $0.hasSuffix("\(refusal) \(candidate)") }
        }
    }

    /// What `offertrackd` accepts.
    static let daemon = accepted(Binaries.daemon, [], among: candidates, refusal: "unknown argument")

    /// What `offertrack` takes instead of a command.
    static let topLevel: Set<String> = candidates.filter { candidate in
        guard let outcome = try? Shell.run(Binaries.cli, [candidate]) else { return false }
        return !outcome.output.contains("unknown command \(candidate)\n")
    }

    /// What each `offertrack` command accepts (a word with one dash is an argument to a command, not a flag).
    static let byCommand: [String: Set<String>] = Dictionary(
        uniqueKeysWithValues: commands.map { command in
            (
                command,
                accepted(
                    Binaries.cli, [command], among: candidates.filter { $0.hasPrefix("--") }, refusal: "unknown option")
            )
        })

    /// Every flag either binary accepts anywhere.
    static var any: Set<String> { byCommand.values.reduce(daemon.union(topLevel)) { $0.union($1) } }
}
