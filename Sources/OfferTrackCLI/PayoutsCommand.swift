import Fleet
import JournalStore
import OfferTrackDomain
import Posix
import PublishedLedger
import Publishing

/// `offertrack payouts --month M [--out DIR]`: the month's payout statement (SPEC section 7.1).
struct PayoutsCommand {
    static let help = """
        Usage: offertrack payouts --month YYYY-MM [--out DIR] [--db PATH] [--rules PATH]

        Writes DIR/payouts-M.csv and DIR/payouts-M.manifest.json (atomically: write, sync, rename): one line per
        affiliate token and currency with the balance carried in from the month before (opening_minor), the sum
        of every row of the month's published export files (earned_minor, adjustments included), the balance,
        what is paid (payable_minor: a balance above 0 and at least the rules file's payoutMinimumMinor) and
        what carries into the next month (carried_minor: a smaller or negative balance).
        The first run for a month publishes it inside the journal with the payout minimum of the rules file it
        is given; running it again rewrites exactly the files first published. A month is refused (exit 65,
        nothing written) until its last day's export is published, and, after the month of the first published
        export day, until the month before it is published: the message names the first missing day or month.
        --out defaults to the current directory and must be a directory owned by this user or root (exit 73).
        --rules is required (the payout minimum): without it the command is refused (exit 64, nothing written),
        except for a month already published, whose files are rewritten as first published.
        With --db given more than once (every central journal of a fleet, covering each partition once), one
        statement covers the union of their published days' rows and is stored in each; a set of journals that
        misses or repeats a partition is refused (exit 65).

        Example:
          offertrack payouts --month 2026-11 --out /var/lib/offertrack-exports --rules /etc/offertrack/rules.json
        """

    let options: CommonOptions
    let month: PayoutMonth
    let outputDirectory: String

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(arguments, valued: ["--db", "--rules", "--month", "--out"])
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "payouts takes no arguments") }
        options = CommonOptions(parsed, environment)
        guard let text = parsed.value("--month") else { throw CLIError(.usage, "payouts needs --month YYYY-MM") }
        guard let month = PayoutMonth(text) else {
            throw CLIError(.usage, "--month must be a YYYY-MM month, not \(text)")
        }
        self.month = month
        outputDirectory = parsed.value("--out") ?? "."
    }

    func run() throws(CLIError) -> Int32 {
        let rules = try options.publishingRules("payouts", period: month.description) {
            try $0.isPublishedMonth(month.description)
        }
        let output = try PublicationOutput(options: options, path: outputDirectory)
        let files: PayoutPublisher.Files
        do {
            try FleetExport.checkPayoutCoverage(journalPaths: options.databasePaths)
            files = try PayoutPublisher.publish(
                journalPaths: options.databasePaths, month: month, rules: rules, now: Clock.wallMilliseconds())
        } catch let refusal as PayoutPublisher.Refusal {
            if case .rulesRequired = refusal { throw CLIError(.usage, "\(refusal)") }
            throw CLIError(.dataError, "refused: \(refusal)")
        } catch let refusal as FleetExport.Refusal {
            throw CLIError(.dataError, "refused: \(refusal)")
        } catch let error as PayoutError {
            throw CLIError(.dataError, "\(month): \(error)")
        } catch let error as JournalOpenError {
            throw CLIError(journal: error, doing: "publishing the payouts of \(month) from \(options.databasePath)")
        } catch {
            throw CLIError(.tryAgain, "publishing the payouts of \(month) from \(options.databasePath): \(error)")
        }
        try output.write(
            csv: files.csv, manifest: files.manifest, name: "payouts-\(month)", republished: files.republished,
            period: "month")
        return 0
    }
}
