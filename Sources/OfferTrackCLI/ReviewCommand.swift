import JSON
import JournalStore
import OfferTrackDomain
import Posix
import WireFormat

/// `offertrack review`: sends an operator's decision on one conversion to the daemon (SPEC 3.4, 6).
struct ReviewCommand {
    static let help = """
        Usage: offertrack review --conversion ID --decision void|hold|release [--reason R] [--note TEXT]
                                 [--socket PATH] [--db PATH]… [--retry-for SECONDS] [--rules PATH]

        Voids, holds or releases one conversion (rule 4.7). Finds the conversion's user in the journal (--db,
        more than once in a fleet), sends one review record (a new unique id, ts now) to offertrackd at
        --socket (an edge in a fleet), retrying storage_unavailable and shutting_down with the same id, and
        prints the daemon's answer. A voided conversion earns nothing; a held one earns nothing until a later
        release; a release lifts the operator's earlier void or hold and a rule's "hold": true. Reasons:
        fraud, refund, duplicate, test, policy, network_rejected (the network's report rejected it, see
        `offertrack reconcile`), other (required for void and hold). The latest review by time wins; a decision
        about a day already exported becomes an adjustment in the next export.
        Exit: 0 accepted, 64 a usage error (nothing sent), 65 rejected, 66 no subscription.outcome has that
        id, 69 daemon unreachable or this user may not review (start offertrackd with --allow-review-uid or
        --allow-review-gid), 75 gave up retrying.

        Example:
          offertrack review --conversion 01JDX3M1C4D1 --decision void --reason refund --note "ticket 4411"
          offertrack review --conversion 01JDX3M1C4D1 --decision release
        """

    let options: CommonOptions
    let socketPath: String
    let conversion: String
    let decision: ReviewDecision
    let reason: ReviewReason?
    let note: String?
    let retryForSeconds: Int

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(
            arguments,
            valued: ["--db", "--rules", "--socket", "--conversion", "--decision", "--reason", "--note", "--retry-for"])
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "review takes no arguments") }
        options = CommonOptions(parsed, environment)
        socketPath = Paths.socket(parsed.value("--socket"), environment)
        guard let conversion = parsed.value("--conversion") else { throw CLIError(.usage, "--conversion is required") }
        guard RecordValidator.isValidID(conversion) else {
            throw CLIError(.usage, "--conversion must be a record id, not \(conversion)")
        }
        self.conversion = conversion
        guard let decisionName = parsed.value("--decision") else {
            throw CLIError(.usage, "--decision is required: void, hold or release")
        }
        guard let decision = ReviewDecision(rawValue: decisionName) else {
            throw CLIError(.usage, "--decision must be void, hold or release, not \(decisionName)")
        }
        self.decision = decision
        let reasons = ReviewReason.allCases.map(\.rawValue).joined(separator: ", ")
        if let reasonName = parsed.value("--reason") {
            guard let reason = ReviewReason(rawValue: reasonName) else {
                throw CLIError(.usage, "--reason must be one of \(reasons), not \(reasonName)")
            }
            self.reason = reason
        } else {
            guard !decision.requiresReason else {
                throw CLIError(.usage, "--reason is required with --decision \(decision.rawValue): one of \(reasons)")
            }
            reason = nil
        }
        note = parsed.value("--note")
        if let note {
            let (scalars, hasControl) = Token.measure(note)
            guard (1...Review.maximumNoteLength).contains(scalars), !hasControl else {
                throw CLIError(
                    .usage, "--note must be 1 to \(Review.maximumNoteLength) characters without control characters")
            }
        }
        let retryFor = parsed.value("--retry-for") ?? "60"
        guard let seconds = Int(retryFor), seconds >= 0 else {
            throw CLIError(.usage, "--retry-for must be a whole number of seconds, not \(retryFor)")
        }
        retryForSeconds = seconds
    }

    func run() throws(CLIError) -> Int32 {
        var user: String?
        for reader in try options.openJournals() where user == nil {
            do {
                user = try reader.userOfOutcome(id: conversion)
            } catch {
                throw CLIError(.ioError, "reading \(reader.path): \(error)")
            }
        }
        guard let user else {
            throw CLIError(
                .noInput,
                "no subscription.outcome with id \(conversion) in \(options.databasePaths.joined(separator: ", "))")
        }
        let now = Clock.wallMilliseconds()
        let line = Array(record(user: user, id: Self.newID(at: now), at: now).utf8)
        let answer = try OperatorRecord.send(
            line, what: "review", socketPath: socketPath, retryForSeconds: retryForSeconds)
        try Output.write(String(decoding: answer.line, as: UTF8.self) + "\n")
        return answer.status == .accepted ? 0 : ExitCode.dataError.rawValue
    }

    /// The `review` record (SPEC 3.4) as one JSON line.
    func record(user: String, id: String, at now: Int64) -> String {
        var members: [(key: String, value: JSONValue)] = [
            ("type", .string("review")), ("id", .string(id)), ("ts", .string(Timestamp.format(now))),
            ("user", .string(user)), ("conversion", .string(conversion)), ("decision", .string(decision.rawValue)),
        ]
        if let reason { members.append(("reason", .string(reason.rawValue))) }
        if let note { members.append(("note", .string(note))) }
        return JSONWriter.text(.object(members))
    }

    /// A new unique record id: `review-`, the time in milliseconds and 64 random bits, in base 36.
    static func newID(at now: Int64) -> String { OperatorRecord.newID("review", at: now) }
}
