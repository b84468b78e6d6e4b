import Foundation
import TestSupport
import Testing

/// The exit-status tables of the manual — `offertrack`'s in docs/cli.md, `offertrackd`'s in docs/operating.md —
/// hold: every example is run and exits with its row's code, and each table lists exactly the codes of its
/// program's manual page (EXIT STATUS).
@Suite struct ExitStatusTests {
    /// (code, example command) for every row of the `| exit |` table of `page`; the example is nil when the row
    /// gives none.
    static func rows(of page: String) throws -> [(code: Int32, example: String?)] {
        let text = try String(contentsOfFile: Repository.file(page), encoding: .utf8)
        var rows: [(Int32, String?)] = []
        var inTable = false
        for line in text.split(separator: "\n") {
            if line.hasPrefix("| exit |") {
                inTable = true
            } else if inTable, line.hasPrefix("|") {
                let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
                guard let code = Int32(cells[1]) else { continue }
                let spans = cells[3].split(separator: "`", omittingEmptySubsequences: false)
                rows.append((code, spans.count > 1 ? String(spans[1]) : nil))
            } else {
                inTable = false
            }
        }
        return rows
    }

    /// The codes a manual page lists under EXIT STATUS (`.TP` then `.B CODE`).
    static func manualCodes(_ page: String) throws -> Set<Int32> {
        let source = try String(contentsOfFile: Repository.file(page), encoding: .utf8)
        let section = source.components(separatedBy: "\n.SH EXIT STATUS\n")[1].components(separatedBy: "\n.SH ")[0]
        let lines = section.split(separator: "\n")
        return Set(
            zip(lines, lines.dropFirst()).compactMap { first, second in
                first == ".TP" && second.hasPrefix(".B ") ? Int32(second.dropFirst(3)) : nil
            })
    }

    @Test func theTablesListTheManualPagesCodes() throws {
        for (page, manual) in [("docs/cli.md", "man/offertrack.1"), ("docs/operating.md", "man/offertrackd.8")] {
            let documented = Set(try Self.rows(of: page).map(\.code))
            #expect(documented.count >= 7, "\(page): \(documented.sorted())")
            let listed = try Self.manualCodes(manual)
            #expect(documented == listed, "\(page): \(documented.sorted()); \(manual): \(listed.sorted())")
        }
    }

    @Test func everyExampleExitsWithItsRowsCode() throws {
        let directory = ScratchDirectory()
        let example = Repository.file("systemd/rules.example.json")
        guard
            let daemon = try IngestedDaemon.simulated(
                in: directory, rulesPath: example, "--users 50 --start 2026-09-01 --days 2")
        else { return }
        try FileManager.default.copyItem(atPath: example, toPath: directory.file("rules.json"))
        try #"{"currency": "USD", "rules": [], "holdingPeriodHour": 1}"#.write(
            toFile: directory.file("bad-rules.json"), atomically: true, encoding: .utf8)
        try #"{"type": "no.such.type"}"#.write(
            toFile: directory.file("bad-record.ndjson"), atomically: true, encoding: .utf8)
        var run = 0
        for page in ["docs/cli.md", "docs/operating.md"] {
            for (code, example) in try Self.rows(of: page) {
                guard let example else { continue }
                var words = example.split(separator: " ").map(String.init)
                let program = words.removeFirst()
                #expect(["offertrack", "offertrackd"].contains(program), "\(page): \(example)")
                let binary = program == "offertrack" ? Binaries.cli : Binaries.daemon
                // In the directory, under a timeout: a daemon example that is wrongly accepted would run for ever.
                let outcome = try Shell.run(
                    "/bin/sh", ["-c", #"cd "$0" && exec timeout 20 "$@""#, directory.path, binary] + words)
                #expect(outcome.status == code, "\(page): `\(example)` exited \(outcome.status): \(outcome.output)")
                run += 1
            }
        }
        #expect(run >= 12, "only \(run) examples")
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
    }
}
