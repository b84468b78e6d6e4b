import Journal
import OfferTrackDomain
import Posix

/// `offertrack status`: is the daemon up, the journal's size, record counts, last seq, last export.
struct StatusCommand {
    static let help = """
        Usage: offertrack status [--db PATH] [--socket PATH]

        Prints whether offertrackd accepts connections on its socket, the journal's size on disk, how many
        records of each type it holds, the last seq and the last published export date.
        Exit: 0 when the daemon is up, 69 when it is not (the rest is still printed).

        Example:
          offertrack status --db /var/lib/offertrack/offertrack.db --socket /run/offertrack.sock
        """

    let databasePath: String
    let socketPath: String

    init(arguments: [String]) throws(CLIError) {
        let parsed = try CommandArguments(arguments, valued: ["--db", "--socket", "--rules"])
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "status takes no arguments") }
        databasePath = Paths.database(parsed.value("--db"))
        socketPath = Paths.socket(parsed.value("--socket"))
    }

    func run() throws(CLIError) -> Int32 {
        let daemonUp: Bool
        if let fd = try? UnixSocket.connect(path: socketPath) {
            FileDescriptor.close(fd)
            daemonUp = true
        } else {
            daemonUp = false
        }
        let reader: JournalReader
        do { reader = try JournalReader(path: databasePath, schema: .anyVersion) } catch {
            throw CLIError(journal: error, doing: "opening \(databasePath)")
        }
        var text = "daemon: \(daemonUp ? "up" : "down") (\(socketPath))\n"
        let size = ["", "-wal"].compactMap { ProcessInfo.fileSize(databasePath + $0) }.reduce(0, +)
        text += "journal: \(databasePath), \(size) bytes\n"
        do {
            let counts = try reader.countsByType()
            for type in RecordType.allCases { text += "records \(type.rawValue): \(counts[type] ?? 0)\n" }
            text += "last seq: \(try reader.lastSeq())\n"
            text += "last published export: \(try reader.lastPublishedDay() ?? "none")\n"
        } catch {
            throw CLIError(.ioError, "reading \(databasePath): \(error)")
        }
        try Output.write(text)
        return daemonUp ? 0 : ExitCode.unavailable.rawValue
    }
}
