import OfferTrackDomain
import OutputFormats
import Posix
import Testing

@testable import OfferTrackCLI

/// `offertrack`'s argument parsing, by tables of cases: `--name value`, `--name=value`, switches, positionals,
/// and what is refused (exit 64).
@Suite struct CommandArgumentsTests {
    static let valued: Set<String> = ["--db", "--since", "--format"]

    /// (arguments, options, positionals, switches)
    static let accepted: [([String], [String: [String]], [String], Set<String>)] = [
        ([], [:], [], []),
        (["--db", "a.db"], ["--db": ["a.db"]], [], []),
        (["--db=a.db"], ["--db": ["a.db"]], [], []),
        (["--db=a=b.db"], ["--db": ["a=b.db"]], [], []),  // only the first `=` separates
        (["--db", "a.db", "--db", "b.db"], ["--db": ["a.db", "b.db"]], [], []),  // repeatable, in order
        (["--db=--since"], ["--db": ["--since"]], [], []),  // a value that starts with -- is given with =
        (["-", "file.ndjson"], [:], ["-", "file.ndjson"], []),
        (["--help"], [:], [], ["--help"]),
        (["x", "--format", "csv", "y"], ["--format": ["csv"]], ["x", "y"], []),
    ]

    @Test(arguments: accepted)
    func argumentsAreSortedIntoOptionsPositionalsAndSwitches(
        arguments: [String], options: [String: [String]], positionals: [String], switches: Set<String>
    ) throws {
        let parsed = try CommandArguments(arguments, valued: Self.valued)
        #expect(parsed.options == options)
        #expect(parsed.positionals == positionals)
        #expect(parsed.flags == switches)
        for (name, values) in options {
            #expect(parsed.values(name) == values && parsed.value(name) == values.last)
        }
    }

    /// (arguments, a part of the message)
    static let refused: [([String], String)] = [
        (["--db"], "--db needs a value"),
        // A forgotten value: the next option is not taken as one, and both are named.
        (["--db", "--since", "2026-12-01"], "--db needs a value, but --since follows it"),
        (["--db", "--help"], "--db needs a value, but --help follows it"),
        (["--format", "--unknown"], "--format needs a value, but --unknown follows it"),
        (["--bogus"], "unknown option --bogus"),
        (["--help=yes"], "unknown option --help=yes"),
        (["--db=x", "--verbose"], "unknown option --verbose"),
    ]

    @Test(arguments: refused)
    func badArgumentsAreUsageErrors(arguments: [String], message: String) {
        #expect {
            _ = try CommandArguments(arguments, valued: Self.valued)
        } throws: { error in
            guard let error = error as? CLIError else { return false }
            return error.exitCode == ExitCode.usage.rawValue && error.description.contains(message)
        }
    }

    /// (report arguments, grouping, rendering)
    static let reports: [([String], ReportGrouping, ReportCommand.Rendering)] = [
        ([], .affiliate, .rows(.table)),
        (["--by", "campaign", "--format", "csv"], .campaign, .rows(.csv)),
        (["--by=day", "--format=json"], .day, .rows(.json)),
        (["--format", "html", "--out", "f.html"], .affiliate, .html),
    ]

    @Test(arguments: reports)
    func reportOptions(arguments: [String], grouping: ReportGrouping, rendering: ReportCommand.Rendering) throws {
        let command = try ReportCommand(arguments: arguments + ["--as-of", "2026-12-01"])
        #expect(command.grouping == grouping && command.rendering == rendering)
        #expect(command.asOf == Timestamp.parseDay("2026-12-01"))
    }

    static let badReports: [([String], String)] = [
        (["--by", "user"], "--by must be affiliate, campaign, message or day"),
        (["--format", "xml"], "--format must be table, csv, json or html"),
        (["--since", "2026-12-02", "--until", "2026-12-01"], "--since must be before --until"),
        (["--since", "yesterday"], "--since"),
        (["stray"], "report takes no arguments"),
    ]

    @Test(arguments: badReports)
    func badReportOptionsAreUsageErrors(arguments: [String], message: String) {
        #expect {
            _ = try ReportCommand(arguments: arguments)
        } throws: { error in
            guard let error = error as? CLIError else { return false }
            return error.exitCode == ExitCode.usage.rawValue && error.description.contains(message)
        }
    }
}
