/// One `offertrack` command: built from its arguments, then run to an exit code.
protocol Command {
    /// The `--help` text, with an example.
    static var help: String { get }
    init(arguments: [String], environment: CommandEnvironment) throws(CLIError)
    mutating func run() throws(CLIError) -> Int32
}

extension IngestCommand: Command {}
extension StatusCommand: Command {}
extension ExportCommand: Command {}
extension PayoutsCommand: Command {}
extension ReconcileCommand: Command {}
extension ReportCommand: Command {}
extension ExplainCommand: Command {}
extension ForwardCommand: Command {}
extension RebuildCommand: Command {}
extension VerifyCommand: Command {}
extension SimulateCommand: Command {}
extension BackupCommand: Command {}
extension ReviewCommand: Command {}
extension EraseCommand: Command {}
extension SealCommand: Command {}
extension SplitCommand: Command {}
extension RulesCommand: Command {}
