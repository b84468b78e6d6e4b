import Journal
import OfferTrackDomain

/// `offertrack report`: the funnel, grouped, in a table, CSV or JSON (SPEC section 6).
struct ReportCommand {
    static let help = """
        Usage: offertrack report [--since TS] [--until TS] [--as-of TS] [--by affiliate|campaign|message|day]
                                 [--format table|csv|json] [--db PATH] [--rules PATH]

        The funnel per group: loaded presentations, those whose user was checked eligible (rule 4.4),
        conversions, attributed conversions, those that lapsed in their holding period (rule 4.6) and those
        still pending at --as-of (default now), the commission that qualified by then and the commission still
        pending. --since/--until/--as-of take RFC 3339 or YYYY-MM-DD (UTC midnight); --since/--until select
        [since, until): presentations by their time, conversions by theirs. Grouped by affiliate unless --by
        says otherwise; unattributed conversions count in the null group, shown as (none) in the table. The
        table writes amounts in the rules' currency (84.00 USD); CSV and JSON in integer minor units.

        Example:
          offertrack report --since 2026-11-01 --until 2026-12-01 --by campaign --format csv
          offertrack report --as-of 2026-12-31 --rules /etc/offertrack/rules.json
        """

    let options: CommonOptions
    let grouping: ReportGrouping
    let format: ReportFormat
    let range: ReportRange
    let asOf: Int64

    init(arguments: [String]) throws(CLIError) {
        let parsed = try CommandArguments(
            arguments, valued: ["--db", "--rules", "--since", "--until", "--as-of", "--by", "--format"])
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "report takes no arguments") }
        options = CommonOptions(parsed)
        let by = parsed.value("--by") ?? "affiliate"
        guard let grouping = ReportGrouping(rawValue: by) else {
            throw CLIError(.usage, "--by must be affiliate, campaign, message or day, not \(by)")
        }
        self.grouping = grouping
        let formatName = parsed.value("--format") ?? "table"
        guard let format = ReportFormat(rawValue: formatName) else {
            throw CLIError(.usage, "--format must be table, csv or json, not \(formatName)")
        }
        self.format = format
        let since = try parsed.value("--since").map { text throws(CLIError) in
            try TimeArgument.parse(text, option: "--since")
        }
        let until = try parsed.value("--until").map { text throws(CLIError) in
            try TimeArgument.parse(text, option: "--until")
        }
        if let since, let until, since >= until { throw CLIError(.usage, "--since must be before --until") }
        range = ReportRange(since: since, until: until)
        asOf = try TimeArgument.asOf(parsed)
    }

    func run() throws(CLIError) -> Int32 {
        let rules = try options.loadRules()
        let reader = try options.openJournal()
        let rows: [ReportRow]
        do {
            rows = try FunnelQuery.rows(reader, grouping: grouping, range: range, rules: rules.rules, asOf: asOf)
        } catch {
            throw CLIError(.ioError, "reading \(options.databasePath): \(error)")
        }
        try Output.write(format.render(rows, grouping: grouping, currency: rules.rules.currency))
        return 0
    }
}
