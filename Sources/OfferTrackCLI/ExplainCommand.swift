import JournalStore
import OfferTrackDomain
import OutputFormats
import Posix
import WireFormat

/// `offertrack explain`: why one user's conversion earned what it did (SPEC section 6).
struct ExplainCommand {
    static let help = """
        Usage: offertrack explain (--user USER | --id RECORD_ID) [--as-of TS] [--format text|json]
                                  [--db PATH] [--rules PATH]

        Explains one user's verdict from their records under the rules file: the conversion (rule 4.1), the
        presentation it is attributed to and why (4.2), the window (4.3), the eligibility check and its age
        (4.4), the commission rule and amount (4.5), and the holding period: the lapse that voided it, or when
        it qualifies and whether it is qualified or pending at --as-of (4.6; default now). --id names any
        record of the user. --db may be given more than once (a fleet's central journals). Exit 66 when the
        journal has no such user or record.

        Example:
          offertrack explain --user u-9f2c --rules /etc/offertrack/rules.json
          offertrack explain --id 01JDX3M1C4D1 --as-of 2026-12-31 --format json
        """

    let options: CommonOptions
    let user: String?
    let recordId: String?
    let asOf: Int64
    let format: ExplanationFormat

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(
            arguments, valued: ["--db", "--rules", "--user", "--id", "--as-of", "--format"])
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "explain takes no arguments") }
        options = CommonOptions(parsed, environment)
        user = parsed.value("--user")
        recordId = parsed.value("--id")
        guard (user == nil) != (recordId == nil) else {
            throw CLIError(.usage, "explain needs exactly one of --user USER and --id RECORD_ID")
        }
        let formatName = parsed.value("--format") ?? "text"
        guard let format = ExplanationFormat(rawValue: formatName) else {
            throw CLIError(.usage, "--format must be text or json, not \(formatName)")
        }
        self.format = format
        asOf = try TimeArgument.asOf(parsed)
    }

    func run() throws(CLIError) -> Int32 {
        let rules = try options.loadRules()
        var found: UserHistory.Found?
        // With several journals (a fleet's central ones) the user's records are all in one of them.
        for reader in try options.openJournals() where found == nil {
            do {
                found = try UserHistory.read(reader, user: user, recordId: recordId)
            } catch {
                throw CLIError(.ioError, "reading \(reader.path): \(error)")
            }
        }
        guard let found else {
            let what = user.map { "user \($0)" } ?? "record \(recordId ?? "")"
            let journals =
                options.databasePaths.count == 1
                ? "the journal \(options.databasePath) has"
                : "the journals \(options.databasePaths.joined(separator: ", ")) have"
            throw CLIError(.noInput, "\(journals) no \(what)")
        }
        let explanation = Explanation(
            user: found.user, userRecords: found.records, sealedRecords: found.sealedRecords, rules: rules.rules,
            asOf: asOf)
        // A sealed record explains its user only when the explanation names it (SPEC 12).
        if let recordId, found.foundBySealedRecord, !explanation.names(recordId: recordId) {
            throw CLIError(
                .noInput, "record \(recordId) is of a sealed day and its user's explanation does not name it")
        }
        try Output.write(format.render(explanation))
        return 0
    }
}
