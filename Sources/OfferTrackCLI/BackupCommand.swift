import JournalStore
import OfferTrackDomain
import Posix

/// `offertrack backup --to PATH`: an online, consistent copy of the journal.
struct BackupCommand {
    static let help = """
        Usage: offertrack backup --to PATH [--compact] [--db PATH] [--rules PATH]

        Copies the journal to PATH, a file that must not exist (exit 73 if it does), with SQLite's online
        backup API while the daemon keeps ingesting: the copy is one consistent snapshot, taken in a read
        transaction (it never holds the write lock), written beside PATH and given its name only once complete
        and synced. `offertrack verify --db PATH` passes on it and every report over it equals the live
        journal's as of the backup. To restore: stop offertrackd, copy the backup over the journal (removing
        any -wal and -shm files beside it), start offertrackd.
        --compact writes the copy with SQLite's VACUUM INTO instead: the same snapshot, but only the pages in
        use, so that restoring it gives back the space sealed days freed (docs/retention.md). It reads the whole
        journal and writes its live pages once.

        Example:
          offertrack backup --db /var/lib/offertrack/offertrack.db --to /var/backups/offertrack/2026-11-28.db
        """

    let options: CommonOptions
    let destination: String
    let compact: Bool

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(
            arguments, valued: ["--db", "--rules", "--to"], switches: ["--help", "--compact"])
        compact = parsed.has("--compact")
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "backup takes no arguments") }
        guard let destination = parsed.value("--to"), !destination.isEmpty else {
            throw CLIError(.usage, "backup needs --to PATH")
        }
        options = CommonOptions(parsed, environment)
        self.destination = destination
    }

    func run() throws(CLIError) -> Int32 {
        let summary: JournalBackup.Summary
        do {
            summary = try JournalBackup.copy(journal: options.databasePath, to: destination, compact: compact)
        } catch let failure as JournalBackup.Failure {
            throw CLIError(.cannotCreate, "\(failure)")
        } catch {
            throw CLIError(journal: error, doing: "backing up \(options.databasePath) to \(destination)")
        }
        try Output.write(
            "backed up \(options.databasePath) to \(destination): \(summary.records) records, "
                + "last seq \(summary.lastSeq)\n")
        return 0
    }
}
