import Fleet
import JournalStore
import OfferTrackDomain
import Posix
import PublishedLedger
import Publishing

/// `offertrack export --date D [--out DIR]`: the nightly commission export (SPEC section 7).
struct ExportCommand {
    static let help = """
        Usage: offertrack export --date YYYY-MM-DD [--out DIR] [--db PATH] [--rules PATH]

        Writes DIR/commissions-D.csv and DIR/commissions-D.manifest.json (atomically: write, sync, rename).
        The first export of a day publishes it inside the journal; exporting a published day again rewrites
        exactly the files first published. Days are published in order without gaps: a day earlier than the
        latest published one, or one that would leave a gap, is refused (exit 65) and nothing is written.
        Changes that reach already-published days appear as adjustment rows in the next day exported.
        --out defaults to the current directory and must be a directory owned by this user or root (exit 73).
        --rules is required (amounts, currency, rulesSha256): without it the command is refused (exit 64, nothing
        written), except for a day already published, whose files are rewritten as first published.
        With --db given more than once (every central journal of a fleet, covering each partition once), D is
        published in each for its own conversions and one file holds the union of their rows; a set of journals
        that misses or repeats a partition is refused (exit 65).

        Example:
          offertrack export --date 2026-11-29 --out /var/lib/offertrack/exports --rules /etc/offertrack/rules.json
        """

    let options: CommonOptions
    let day: String
    let outputDirectory: String

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(arguments, valued: ["--db", "--rules", "--date", "--out"])
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "export takes no arguments") }
        options = CommonOptions(parsed, environment)
        guard let day = parsed.value("--date") else { throw CLIError(.usage, "export needs --date YYYY-MM-DD") }
        guard let start = Timestamp.parseDay(day), Timestamp.formatDay(start) == day else {
            throw CLIError(.usage, "--date must be a YYYY-MM-DD date, not \(day)")
        }
        self.day = day
        outputDirectory = parsed.value("--out") ?? "."
    }

    func run() throws(CLIError) -> Int32 {
        let rules = try options.publishingRules("export", period: day) { try $0.isPublished(day) }
        let output = try PublicationOutput(options: options, path: outputDirectory)
        let files: CommissionExporter.Files
        do {
            if options.databasePaths.count > 1 {
                files = try FleetExport.export(
                    journalPaths: options.databasePaths, day: day, rules: rules, now: Clock.wallMilliseconds(),
                    hooks: options.environment.exportHooks)
            } else {
                try FleetExport.refuseEdgeJournals([ReadOnlyJournal(path: options.databasePath)])
                files = try CommissionExporter.export(
                    journalPath: options.databasePath, day: day, rules: rules, now: Clock.wallMilliseconds(),
                    hooks: options.environment.exportHooks)
            }
        } catch let refusal as FleetExport.Refusal {
            throw CLIError(.dataError, "refused: \(refusal)")
        } catch let refusal as CommissionExporter.Refusal {
            if case .rulesRequired = refusal { throw CLIError(.usage, "\(refusal)") }
            throw CLIError(.dataError, "refused: \(refusal)")
        } catch let overflow as MoneyOverflow {
            throw CLIError(.dataError, "refused: \(overflow); check the rules file's amounts")
        } catch let error as JournalOpenError {
            // Another schema version is refused (exit 69), never migrated: only the daemon and rebuild migrate.
            throw CLIError(journal: error, doing: "exporting \(day) from \(options.databasePath)")
        } catch {
            throw CLIError(.tryAgain, "exporting \(day) from \(options.databasePath): \(error)")
        }
        try output.write(
            csv: files.csv, manifest: files.manifest, name: "commissions-\(day)", republished: files.republished,
            period: "day")
        return 0
    }
}
