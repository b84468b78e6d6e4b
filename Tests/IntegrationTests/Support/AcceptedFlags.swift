import Foundation
import TestSupport

/// The flags each binary and each `offertrack` command accepts, asked of the built binaries. The candidates are
/// every `--word` (and `-h`) written anywhere in Sources/, man/, docs/ or the README; each is given to the binary
/// followed by two flags nobody accepts, so that no command ever runs: an unknown candidate is refused by name
/// (`unknown option X`, `unknown argument X`), an accepted one is not (the error names the next argument, or a
/// value, instead). Asked once per test process.
enum AcceptedFlags {
    static let commands = [
        "report", "explain", "export", "payouts", "reconcile", "review", "erase", "ingest", "status", "forward",
        "rebuild", "seal", "split",
        "verify", "backup", "simulate", "rules",
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
