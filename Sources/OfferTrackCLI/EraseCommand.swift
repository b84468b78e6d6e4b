import JSON
import OfferTrackDomain
import Posix
import WireFormat

/// `offertrack erase`: sends a person's request to be forgotten to the daemon (SPEC 3.5, 6, 11).
struct EraseCommand {
    static let help = """
        Usage: offertrack erase --user USER --ticket TEXT [--socket PATH] [--retry-for SECONDS]
                                [--db PATH] [--rules PATH]

        Forgets a person: sends one erasure record (a new unique id, ts now) for USER to offertrackd at --socket
        (an edge in a fleet), retrying storage_unavailable and shutting_down with the same id, prints the daemon's
        answer and then, on a line of its own, the name the person's records now have (erased:<id>). Every record
        of USER, past and future, is renamed so; no amount, report, export or payout changes. USER need not have
        records yet. TEXT is your reference for the request (a ticket, a case number; 1 to 100 characters). Within
        60 s the old id is in no file the daemon writes; backups and the stream's retained messages keep it until
        they age out (docs/reviews-payouts-erasure.md).
        Exit: 0 accepted, 64 a usage error (nothing sent), 65 rejected (a shared id such as anonymous names no
        person), 69 daemon unreachable or this user may not send erasures (start offertrackd with
        --allow-review-uid or --allow-review-gid), 75 gave up retrying.

        Example:
          offertrack erase --user u-9f2c --ticket DSR-2041
        """

    let socketPath: String
    let user: String
    let ticket: String
    let retryForSeconds: Int

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(
            arguments, valued: ["--db", "--rules", "--socket", "--user", "--ticket", "--retry-for"])
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "erase takes no arguments") }
        socketPath = Paths.socket(parsed.value("--socket"), environment)
        guard let user = parsed.value("--user") else { throw CLIError(.usage, "--user is required") }
        let (userLength, userControl) = Token.measure(user)
        guard (1...128).contains(userLength), !userControl else {
            throw CLIError(.usage, "--user must be 1 to 128 characters without control characters")
        }
        self.user = user
        guard let ticket = parsed.value("--ticket") else { throw CLIError(.usage, "--ticket is required") }
        let (ticketLength, ticketControl) = Token.measure(ticket)
        guard (1...Erasure.maximumTicketLength).contains(ticketLength), !ticketControl else {
            throw CLIError(
                .usage, "--ticket must be 1 to \(Erasure.maximumTicketLength) characters without control characters")
        }
        self.ticket = ticket
        let retryFor = parsed.value("--retry-for") ?? "60"
        guard let seconds = Int(retryFor), seconds >= 0 else {
            throw CLIError(.usage, "--retry-for must be a whole number of seconds, not \(retryFor)")
        }
        retryForSeconds = seconds
    }

    func run() throws(CLIError) -> Int32 {
        let now = Clock.wallMilliseconds()
        let id = OperatorRecord.newID("erasure", at: now)
        let line = JSONValue.object([
            "type": .string("erasure"), "id": .string(id), "ts": .string(Timestamp.format(now)),
            "user": .string(user), "ticket": .string(ticket),
        ])
        let answer = try OperatorRecord.send(
            JSONWriter.bytes(line), what: "erasure", socketPath: socketPath, retryForSeconds: retryForSeconds)
        try Output.write(String(decoding: answer.line, as: UTF8.self) + "\n")
        guard answer.status == .accepted else { return ExitCode.dataError.rawValue }
        try Output.write(Erasure.name(erasureID: id) + "\n")
        return 0
    }
}
