import OfferTrackDomain
import Posix

/// `offertrack ingest [FILE|-] [--socket PATH]`: sends NDJSON records to the daemon, retrying what is
/// retryable with the same line (so the same id), and prints a summary.
struct IngestCommand {
    static let help = """
        Usage: offertrack ingest [FILE|-] [--socket PATH] [--retry-for SECONDS] [--db PATH] [--rules PATH]

        Sends NDJSON records (one JSON object per line) to offertrackd and waits for every answer. Records
        answered storage_unavailable or shutting_down, or lost to a dropped connection, are sent again with
        the same id until the daemon answers (for up to --retry-for seconds, default 300). Prints how many
        were accepted, duplicate and rejected, with each rejected line's number and reason.
        Exit: 0 all accepted or duplicate, 65 some rejected, 69 daemon unreachable or this user not allowed
        (unauthorized), 75 gave up retrying, 64 a bad flag value.

        Example:
          offertrack simulate --users 1000 | offertrack ingest - --socket ./offertrack.sock
        """

    /// Lines read from the input and delivered (retries included) before the next are read.
    static let window = 65536

    struct Line: Sendable {
        let number: Int
        let bytes: [UInt8]
    }

    struct Summary {
        var accepted = 0
        var duplicate = 0
        var rejected: [(line: Int, reason: String)] = []
        var sent = 0
    }

    let socketPath: String
    let inputPath: String?
    let retryForSeconds: Int
    let showProgress: Bool
    private(set) var summary = Summary()

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(arguments, valued: ["--socket", "--retry-for", "--db", "--rules"])
        guard parsed.positionals.count <= 1 else { throw CLIError(.usage, "ingest takes one FILE or -") }
        socketPath = Paths.socket(parsed.value("--socket"), environment)
        inputPath = parsed.positionals.first.flatMap { $0 == "-" ? nil : $0 }
        let retryFor = parsed.value("--retry-for") ?? "300"
        guard let seconds = Int(retryFor), seconds >= 0 else {
            throw CLIError(.usage, "--retry-for must be a whole number of seconds, not \(retryFor)")
        }
        retryForSeconds = seconds
        showProgress = FileDescriptor.isTerminal(2)
    }

    mutating func run() throws(CLIError) -> Int32 {
        let inputFD: Int32
        if let inputPath {
            inputFD = FileSystem.openForReading(inputPath)
            guard inputFD >= 0 else { throw CLIError(.noInput, "cannot open \(inputPath)") }
        } else {
            inputFD = 0
        }
        defer { if inputFD != 0 { FileDescriptor.close(inputFD) } }
        let input = LineReader(fd: inputFD)
        var connection = try DaemonConnection.open(socketPath, retryForSeconds: 0)
        var number = 0
        var window: [Line] = []
        var endOfInput = false
        while !endOfInput {
            window.removeAll(keepingCapacity: true)
            while window.count < Self.window {
                let next: [UInt8]?
                do { next = try input.nextLine() } catch { throw CLIError(.ioError, "reading input: \(error)") }
                guard var bytes = next else {
                    endOfInput = true
                    break
                }
                number += 1
                if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
                // The daemon answers every line that is not empty after one trailing \r is dropped.
                if !bytes.isEmpty { window.append(Line(number: number, bytes: bytes)) }
            }
            try deliver(window, over: &connection)
            if showProgress {
                FileDescriptor.printProgress(
                    "offertrack: \(summary.sent) sent, \(summary.accepted) accepted, "
                        + "\(summary.duplicate) duplicate, \(summary.rejected.count) rejected")
            }
        }
        connection.close()
        if showProgress { FileDescriptor.printError("") }
        try Output.write(report())
        return summary.rejected.isEmpty ? 0 : ExitCode.dataError.rawValue
    }

    /// Sends `lines` until each has a final answer, counting the answers in `summary`.
    private mutating func deliver(_ lines: [Line], over connection: inout DaemonConnection) throws(CLIError) {
        let delivery = RecordDelivery(socketPath: socketPath, retryForSeconds: retryForSeconds)
        var summary = self.summary
        defer { self.summary = summary }
        do {
            try delivery.deliver(lines.map(\.bytes), over: &connection) { index, answer in
                switch answer.status {
                case .accepted: summary.accepted += 1
                case .duplicate: summary.duplicate += 1
                case .rejected:
                    let field = answer.field.map { " (\($0))" } ?? ""
                    summary.rejected.append(
                        (lines[index].number, "\(answer.code ?? "rejected")\(field): \(answer.message ?? "")"))
                }
                summary.sent += 1
            }
        } catch let gaveUp as RecordDelivery.GaveUp {
            throw CLIError(
                .tryAgain,
                "gave up after \(retryForSeconds) s: \(gaveUp.unanswered.count) records from line "
                    + "\(lines[gaveUp.unanswered[0]].number) are not journaled; run ingest again (ids make it safe)\n"
                    + report())
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError(.software, "delivering records: \(error)")
        }
    }

    private func report() -> String {
        var text = "accepted \(summary.accepted)\nduplicate \(summary.duplicate)\nrejected \(summary.rejected.count)\n"
        for rejection in summary.rejected {
            text += "line \(rejection.line): \(rejection.reason)\n"
        }
        return text
    }
}
