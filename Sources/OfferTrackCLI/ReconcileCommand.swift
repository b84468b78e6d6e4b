import AttributionJoin
import OfferTrackDomain
import OutputFormats
import Posix
import WireFormat

/// `offertrack reconcile --network FILE --month M`: the month's conversions beside the network's conversion report
/// (SPEC section 13). It reads only.
struct ReconcileCommand {
    static let help = """
        Usage: offertrack reconcile --network FILE --month YYYY-MM --rules PATH [--as-of TS]
                                    [--format table|csv|json] [--columns NAME=HEADER,…] [--db PATH]…

        Puts the month's attributed conversions with an affiliate token beside the affiliate network's conversion
        report, per affiliate and campaign token (per campaign token alone when the network's file has no
        affiliate_token column) and status: ours counts a qualified conversion as approved, a pending or held one
        as pending, a lapsed or voided one as rejected, in its state at --as-of (default now). Each row is
        matched, differs, only_ours or only_theirs; the table ends with a TOTAL line per status.
        The network's file is CSV with a header line; columns found by name, ASCII case ignored, others ignored:
        conversion_date (YYYY-MM-DD or RFC 3339), status (pending, approved or rejected), campaign_token (empty
        for none), and optionally affiliate_token and count (1 to 18 digits; a row is one conversion without
        it). Quoted fields, \\r\\n line ends and a UTF-8 byte order mark are read; rows of other months are left
        out after every row is checked. --columns names a column the network's file calls otherwise, e.g.
        --columns conversion_date=conversion_time,campaign_token=publisher_reference (docs/closing-a-month.md).
        --rules is required (rules 4.6 and 4.7 decide the states). Nothing is journaled. With --db given more
        than once (a fleet's central journals) they are read as one.
        Exit: 0 every row matched (or none), 1 a row differs, 64 usage (--rules missing included), 65 a bad
        network file (naming its line; the header is line 1) or journals that are not one fleet, 66 the network
        file or the journal is missing, 78 a bad rules file.

        Example:
          offertrack reconcile --network network-2026-11.csv --month 2026-11 --rules /etc/offertrack/rules.json
        """

    let options: CommonOptions
    let networkPath: String
    let month: PayoutMonth
    let asOf: Int64
    let format: ReconciliationFormat
    let headerNames: [NetworkReportFile.Column: String]

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(
            arguments, valued: ["--db", "--rules", "--network", "--month", "--as-of", "--format", "--columns"])
        options = CommonOptions(parsed, environment)
        guard options.rulesPath != nil else {
            throw CLIError(.usage, "--rules PATH is required: the rules decide each conversion's state")
        }
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "reconcile takes no arguments") }
        guard let networkPath = parsed.value("--network") else {
            throw CLIError(.usage, "reconcile needs --network FILE (the network's conversion report, CSV)")
        }
        self.networkPath = networkPath
        guard let text = parsed.value("--month") else { throw CLIError(.usage, "reconcile needs --month YYYY-MM") }
        guard let month = PayoutMonth(text) else {
            throw CLIError(.usage, "--month must be a YYYY-MM month, not \(text)")
        }
        self.month = month
        let formatName = parsed.value("--format") ?? "table"
        guard let format = ReconciliationFormat(rawValue: formatName) else {
            throw CLIError(.usage, "--format must be table, csv or json, not \(formatName)")
        }
        self.format = format
        asOf = try TimeArgument.asOf(parsed)
        headerNames = try Self.headerNames(parsed.values("--columns"))
    }

    /// `--columns NAME=HEADER[,NAME=HEADER…]` (repeatable): the header a column has in the network's file.
    static func headerNames(_ values: [String]) throws(CLIError) -> [NetworkReportFile.Column: String] {
        var names: [NetworkReportFile.Column: String] = [:]
        for pair in values.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let known = NetworkReportFile.Column.allCases.map(\.rawValue).joined(separator: ", ")
            guard parts.count == 2, let column = NetworkReportFile.Column(rawValue: String(parts[0])), !parts[1].isEmpty
            else { throw CLIError(.usage, "--columns takes NAME=HEADER pairs, NAME one of \(known); not \(pair)") }
            guard names[column] == nil else { throw CLIError(.usage, "--columns names \(column.rawValue) twice") }
            names[column] = String(parts[1])
        }
        return names
    }

    func run() throws(CLIError) -> Int32 {
        let rules = try options.loadRules()
        guard let bytes = FileSystem.readFile(networkPath) else {
            throw CLIError(.noInput, "cannot read the network's file \(networkPath)")
        }
        var reconciliation: Reconciliation
        do {
            reconciliation = try NetworkReportFile.read(bytes, month: month, headerNames: headerNames)
        } catch {
            throw CLIError(.dataError, "\(networkPath): \(error)")
        }
        let readers = try options.openJournals()
        let span = month.span
        var overflow: Reconciliation.CountOverflow?
        do {
            try FunnelQuery.forEachConversion(
                readers, range: ReportRange(since: span.lowerBound, until: span.upperBound), rules: rules.rules
            ) { conversion in
                do throws(Reconciliation.CountOverflow) {
                    try reconciliation.addOurs(conversion, asOf: asOf)
                } catch { overflow = error }
            }
        } catch {
            throw CLIError(journal: error, doing: "reading \(options.databasePaths.joined(separator: ", "))")
        }
        if let overflow { throw CLIError(.dataError, "\(overflow)") }
        let rows = reconciliation.rows
        do {
            try Output.write(try format.render(rows, perAffiliate: reconciliation.perAffiliate))
        } catch {
            throw CLIError(.dataError, "\(error)")
        }
        return rows.allSatisfy { $0.rowClass == .matched } ? 0 : 1
    }
}
