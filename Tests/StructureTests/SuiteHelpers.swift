import Foundation

/// Helpers a test file takes from another file's suite (`OtherTests.helper`, `typealias X = OtherTests`): shared
/// helpers live in a support file (issue 46, item 6). A suite is a type named `…Tests`; a file that declares or
/// extends it may use its members, whichever of its files they are in.
enum SuiteHelpers {
    /// Each use, as `file:line: text`, among `files` (path and text) of one module; comments aside.
    static func borrowed(in files: [(path: String, text: String)]) -> [String] {
        let code = files.map { (path: $0.path, lines: codeLines($0.text)) }
        let declared = Set(code.flatMap { names(declaring, in: $0.lines.joined(separator: "\n")) })
        var uses: [String] = []
        for file in code {
            let own = Set(names(declaring, in: file.lines.joined(separator: "\n")))
                .union(names(extending, in: file.lines.joined(separator: "\n")))
            for (number, line) in file.lines.enumerated() {
                for suite in names(using, in: line) + names(aliasing, in: line)
                where declared.contains(suite) && !own.contains(suite) {
                    uses.append("\(file.path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                    break
                }
            }
        }
        return uses
    }

    private static let declaring = #"\b(?:struct|class|enum|actor)\s+([A-Z]\w*Tests)\b"#
    private static let extending = #"\bextension\s+(?:\w+\.)*([A-Z]\w*Tests)\b"#
    /// `OtherTests.member` or `OtherTests.Nested` (not `.self`).
    private static let using = #"\b([A-Z]\w*Tests)\.(?!self\b)[A-Za-z_]"#
    private static let aliasing = #"\btypealias\s+\w+\s*=\s*(?:\w+\.)*([A-Z]\w*Tests)\b"#

    /// The first capture of every match of `pattern` in `text`.
    private static func names(_ pattern: String, in text: String) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    /// `text`'s lines without their `//` comments.
    private static func codeLines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            String(line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        }
    }
}
