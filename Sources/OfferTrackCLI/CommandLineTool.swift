import JournalStore
import OfferTrackDomain
import Posix

/// The `offertrack` command line: dispatches to one command and maps errors to exit codes.
public enum CommandLineTool {
    static let usage = """
        Usage: offertrack COMMAND [options]

        Commands:
          report     the funnel: presentations, eligibility, conversions and commissions
          explain    why one user's conversion earned what it did, rule by rule
          export     write the nightly commission export for one day
          payouts    write the payout statement of one month (from its published export days)
          reconcile  the month's conversions beside the affiliate network's conversion report
          review     void, hold or release one conversion (an operator's decision, journaled)
          erase      forget a person: rename their records erased:<id>, past and future (amounts unchanged)
          ingest     send NDJSON records to offertrackd
          status     is the daemon up; journal size, counts, last seq, last export
          forward    forward an edge's journal to the stream again from a seq
          split      move some partitions of a central journal into a new one (adding a central daemon)
          seal       seal the days older than the rules' retentionDays (their raw records leave the journal)
          rebuild    recompute everything derived from the journal
          verify     check the journal's integrity and invariants
          backup     an online, consistent copy of the journal (--to PATH)
          simulate   print a realistic, deterministic NDJSON workload
          rules      rules check FILE: is a rules file valid, and what would it change (before a reload)

        Every command takes --db PATH, --rules PATH and --help. See `offertrack COMMAND --help`.
        `offertrack --help` (or -h, or help) prints this; `offertrack --version` the release and journal schema.
        """

    /// Runs the command named by `arguments[0]` with what the executable read from its `environment`, and returns
    /// the process exit code.
    public static func run(_ arguments: [String], environment: CommandEnvironment) -> Int32 {
        guard let name = arguments.first else {
            FileDescriptor.printError("offertrack: a command is required\n\(usage)")
            return ExitCode.usage.rawValue
        }
        let rest = Array(arguments.dropFirst())
        if name == "--help" || name == "-h" || name == "help" {
            try? Output.write(usage + "\n")
            return 0
        }
        if name == "--version" {
            try? Output.write(VersionLine.text(program: "offertrack") + "\n")
            return 0
        }
        do {
            return try dispatch(name, rest, environment)
        } catch {
            FileDescriptor.printError("offertrack \(name): \(error)")
            return error.exitCode
        }
    }

    private static func dispatch(_ name: String, _ arguments: [String], _ environment: CommandEnvironment)
        throws(CLIError) -> Int32
    {
        guard let type = command(named: name) else { throw CLIError(.usage, "unknown command \(name)\n\(usage)") }
        if arguments.contains("--help") { return try help(type.help) }
        var command = try type.init(arguments: arguments, environment: environment)
        return try command.run()
    }

    private static func command(named name: String) -> (any Command.Type)? {
        switch name {
        case "ingest": IngestCommand.self
        case "status": StatusCommand.self
        case "export": ExportCommand.self
        case "payouts": PayoutsCommand.self
        case "reconcile": ReconcileCommand.self
        case "report": ReportCommand.self
        case "explain": ExplainCommand.self
        case "forward": ForwardCommand.self
        case "seal": SealCommand.self
        case "split": SplitCommand.self
        case "rebuild": RebuildCommand.self
        case "verify": VerifyCommand.self
        case "backup": BackupCommand.self
        case "review": ReviewCommand.self
        case "erase": EraseCommand.self
        case "simulate": SimulateCommand.self
        case "rules": RulesCommand.self
        default: nil
        }
    }

    private static func help(_ text: String) throws(CLIError) -> Int32 {
        try Output.write(text + "\n")
        return 0
    }
}
