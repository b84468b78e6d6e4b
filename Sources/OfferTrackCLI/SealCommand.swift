import JournalSealing
import JournalStore
import OfferTrackDomain
import Posix
import WireFormat

/// `offertrack seal`: seals the days older than the rules' retention (SPEC section 12).
struct SealCommand {
    static let help = """
        Usage: offertrack seal --rules PATH [--as-of TS] [--db PATH]

        Seals every day older than the rules file's retentionDays R before --as-of (default now): each UTC day
        d < date(--as-of) - R not sealed yet, from the journal's first day on. A sealed day's raw records leave
        the journal; its reviews and erasures stay, and so does every fact reports, explain, export and payouts
        read: their output does not change. Records before the acceptance horizon (00:00Z of the last sealed
        day + 1 + ceil((W + F) / 24 h)) are refused `expired` from then on, and the rules' attributionWindowHours
        and eligibilityFreshnessHours are fixed. Runs while the daemon ingests, in short transactions; a run
        that is interrupted is finished by the next. Without retentionDays it seals nothing and says so.
        Prints the days sealed, the records removed and the horizon.
        Exit: 64 no --rules, 78 a bad rules file or other windows than the last seal's, 66 no journal,
        65 corrupt, 69 another schema, 75 busy or the daemon recomputing for new rules (run it again later),
        73 disk full or read-only, 74 I/O error, 70 anything else.

        Example:
          offertrack seal --db /var/lib/offertrack/offertrack.db --rules /etc/offertrack/rules.json
        """

    let options: CommonOptions
    let asOf: Int64

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(arguments, valued: ["--db", "--rules", "--as-of"])
        options = CommonOptions(parsed, environment)
        // Checked before any other refusal (SPEC 6).
        guard options.rulesPath != nil else {
            throw CLIError(.usage, "--rules PATH is required: seal keeps what the rules' windows read")
        }
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "seal takes no arguments") }
        try options.requireOneJournal("seal")
        asOf = try TimeArgument.asOf(parsed)
    }

    func run() throws(CLIError) -> Int32 {
        let rules = try options.loadRules()
        guard CurrentProcess.fileSize(options.databasePath) != nil else {
            throw CLIError(.noInput, "no journal at \(options.databasePath)")
        }
        guard let retention = rules.rules.retention else {
            try Output.write("the rules file has no retentionDays: raw records are kept forever; nothing sealed\n")
            return 0
        }
        let outcome: JournalSealer.Outcome
        do {
            outcome = try JournalSealer(path: options.databasePath, hooks: options.environment.sealHooks).seal(
                retention: retention, asOf: asOf)
        } catch JournalSealer.Refusal.windowsDiffer(let refusal) {
            throw CLIError(.configuration, "\(options.rulesPath ?? ""): \(refusal.located)")
        } catch JournalSealer.Refusal.recomputeInProgress {
            throw CLIError(
                .tryAgain,
                "the daemon is recomputing the derived tables for new rules; nothing sealed: run seal again once "
                    + "it is done (offertrack status)")
        } catch {
            throw CLIError(journal: error, doing: "sealing \(options.databasePath)")
        }
        try Output.write(Self.summary(outcome, retention: retention, asOf: asOf))
        return 0
    }

    /// What a run did, in one or two lines.
    static func summary(_ outcome: JournalSealer.Outcome, retention: Retention, asOf: Int64) -> String {
        var text: String
        if let days = outcome.sealedDays {
            let count = days.upperBound - days.lowerBound + 1
            text =
                "sealed \(count) \(count == 1 ? "day" : "days"), \(day(days.lowerBound)) to \(day(days.upperBound)); "
                + "removed \(outcome.recordsRemoved) records\n"
        } else if let state = outcome.state {
            text =
                "nothing to seal: every day through \(day(state.lastSealedDay)) is sealed and retention (\(retention.retentionDays) days) "
                + "keeps the days after it at \(Timestamp.format(asOf))\n"
            if outcome.recordsRemoved > 0 {
                text += "removed \(outcome.recordsRemoved) records an interrupted seal had left\n"
            }
        } else {
            text =
                "nothing to seal: the journal has no records older than retention (\(retention.retentionDays) days) "
                + "at \(Timestamp.format(asOf))\n"
        }
        if let state = outcome.state {
            text +=
                "last sealed day \(day(state.lastSealedDay)); acceptance horizon \(Timestamp.format(state.horizon))\n"
        }
        return text
    }

    private static func day(_ number: Int64) -> String {
        Timestamp.formatDay(number * Timestamp.millisecondsPerDay)
    }
}
