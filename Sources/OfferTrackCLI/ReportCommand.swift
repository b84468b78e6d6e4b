import Journal
import OfferTrackDomain

/// `offertrack report`: the funnel, grouped, in a table, CSV or JSON (SPEC section 6).
struct ReportCommand {
    static let help = """
        Usage: offertrack report [--since TS] [--until TS] [--by affiliate|campaign|message|day]
                                 [--format table|csv|json] [--db PATH] [--rules PATH]

        The funnel per group: loaded presentations, those whose user was checked eligible (rule 4.4),
        conversions, attributed conversions and their commission in minor units. --since/--until take RFC 3339
        or YYYY-MM-DD (UTC midnight) and select [since, until): presentations by their time, conversions by
        theirs. Grouped by affiliate unless --by says otherwise; unattributed conversions count in the null
        group, shown as (none) in the table.

        Example:
          offertrack report --since 2026-11-01 --until 2026-12-01 --by campaign --format csv
        """

    let options: CommonOptions
    let grouping: ReportGrouping
    let format: ReportFormat
    let range: ReportRange

    init(arguments: [String]) throws(CLIError) {
        let parsed = try CommandArguments(
            arguments, valued: ["--db", "--rules", "--since", "--until", "--by", "--format"])
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
    }

    func run() throws(CLIError) -> Int32 {
        let rules = try options.loadRules()
        let reader = try options.openJournal()
        let rows: [ReportRow]
        do {
            rows = try FunnelQuery.rows(reader, grouping: grouping, range: range, rules: rules.rules)
        } catch {
            throw CLIError(.ioError, "reading \(options.databasePath): \(error)")
        }
        try Output.write(format.render(rows, grouping: grouping))
        return 0
    }
}
