import Foundation
import OfferTrackDomain
import TestSupport
import Testing

/// The manual pages in man/, written by hand: they render without a warning, have the sections an operator
/// looks for, and name every flag the binaries accept (and none they do not). What a binary accepts is asked of
/// the binary itself (`AcceptedFlags`), command by command, so a flag added to a parser without its page and
/// its `--help` fails here.
@Suite struct ManualPageTests {
    static let pages = ["man/offertrackd.8", "man/offertrack.1", "man/offertrack-rules.5"]
    /// A program's page has systemd's sections; a file format's page (section 5) has its own.
    static func sections(of page: String) -> [String] {
        page.hasSuffix(".5")
            ? [
                "NAME", "SYNOPSIS", "DESCRIPTION", "KEYS", "RULE OBJECTS", "MATCHING", "ERRORS", "CHECKING A FILE",
                "EXAMPLES", "FILES", "SEE ALSO",
            ]
            : [
                "NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "SIGNALS", "FILES", "ENVIRONMENT",
                "EXAMPLES", "SEE ALSO",
            ]
    }

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
        #expect(headings == Self.sections(of: page), "\(page): \(headings)")
        #expect(source.contains("\"offertrack \(OfferTrackVersion.string)\""), "\(page): .TH names another release")
        // Every page names the other two in SEE ALSO.
        let seeAlso = source.components(separatedBy: "\n.SH SEE ALSO\n").last ?? ""
        for other in Self.pages where other != page {
            let name = URL(fileURLWithPath: other).deletingPathExtension().lastPathComponent
            let section = URL(fileURLWithPath: other).pathExtension
            let reference = ".BR \(name.replacingOccurrences(of: "-", with: #"\-"#)) (\(section))"
            #expect(seeAlso.contains(reference), "\(page): SEE ALSO lacks \(reference)")
        }
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
