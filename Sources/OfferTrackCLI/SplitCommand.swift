import Fleet
import JournalStore
import OfferTrackDomain
import Posix

/// `offertrack split`: adding a central daemon (SPEC 10). Some partitions of a stopped central daemon's journal,
/// with everything of their users, move into a new journal for the new central daemon.
struct SplitCommand {
    static let help = """
        Usage: offertrack split --db PATH --to PATH --partitions LIST [--rules PATH]

        Adds a central daemon to a fleet: moves partitions LIST (like 8-15 or 2,5) of the central journal --db,
        with every record, sealed fact, published export line and row in force of their users, into a new
        journal --to, which a new central daemon started with --partitions LIST consumes into from where the
        stream's durable consumers (central-<p>) left off. The --db journal keeps its other partitions; both keep
        the forgotten people, the payout months and the sealing state, and the sealed days' presentation counts
        stay in --db. The fleet's report, explain, export (a published day rewrites as the same bytes) and payouts
        over every central journal are unchanged. Run it with the --db daemon and its export, payouts and seal
        jobs stopped; restart that daemon with the partitions it keeps. An interrupted split changed nothing or
        is finished by running the same command again.
        Exit: 64 usage (a partition the journal does not hold, or all of them), 66 no journal, 65 not a central
        journal or not dividable (days published before schema 14, a forgotten person of an older release),
        75 a daemon runs on --db (stop it), 73 --to exists, disk full or read-only, 69 a newer schema,
        74 I/O error, 70 anything else.

        Example:
          offertrack split --db /var/lib/offertrack/offertrack.db --to /srv/new-central.db --partitions 8-15
        """

    let options: CommonOptions
    let target: String
    let partitions: [Int]

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(arguments, valued: ["--db", "--rules", "--to", "--partitions"])
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "split takes no arguments") }
        options = CommonOptions(parsed, environment)
        try options.requireOneJournal("split")
        guard let target = parsed.value("--to"), !target.isEmpty else {
            throw CLIError(.usage, "--to PATH is required: the new central journal")
        }
        guard let list = parsed.value("--partitions") else {
            throw CLIError(.usage, "--partitions LIST is required: the partitions that move (like 8-15)")
        }
        do { partitions = try Partition.list(list) } catch {
            throw CLIError(.usage, "--partitions takes a list like 8-15 or 2,5, each partition once, not \(list)")
        }
        self.target = target
    }

    func run() throws(CLIError) -> Int32 {
        guard CurrentProcess.fileSize(options.databasePath) != nil else {
            throw CLIError(.noInput, "no journal at \(options.databasePath)")
        }
        let outcome: JournalSplit.Outcome
        do {
            outcome = try JournalSplit.split(
                source: options.databasePath, target: target, moving: partitions,
                log: Logger(program: "offertrack"))
        } catch let refusal as JournalSplit.Refusal {
            let code: ExitCode =
                switch refusal.kind {
                case .busy: .tryAgain
                case .targetExists: .cannotCreate
                case .notDividable: .dataError
                case .usage: .usage
                }
            throw CLIError(code, refusal.description)
        } catch {
            throw CLIError(journal: error, doing: "splitting \(options.databasePath)")
        }
        try Output.write(Self.summary(outcome, source: options.databasePath, target: target))
        return 0
    }

    /// What the split did, in two lines.
    static func summary(_ outcome: JournalSplit.Outcome, source: String, target: String) -> String {
        func list(_ partitions: [Int]) -> String { partitions.map(String.init).joined(separator: ",") }
        if outcome.finishedEarlierRun {
            return "finished an earlier split: \(target) holds partitions \(list(outcome.targetPartitions)), "
                + "\(source) partitions \(list(outcome.sourcePartitions))\n"
        }
        return "\(source): partitions \(list(outcome.sourcePartitions)), \(outcome.keptUsers) users\n"
            + "\(target): partitions \(list(outcome.targetPartitions)), \(outcome.movedUsers) users, "
            + "\(outcome.movedLines) published export lines\n"
            + "start its daemon with --partitions \(list(outcome.targetPartitions)); restart \(source)'s with "
            + "--partitions \(list(outcome.sourcePartitions))\n"
    }
}
