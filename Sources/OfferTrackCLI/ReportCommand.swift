import AttributionJoin
import JournalStore
import OfferTrackDomain
import OutputFormats
import Posix
import PublishedLedger
import WireFormat

/// `offertrack report`: the funnel, grouped, in a table, CSV or JSON (SPEC section 6).
struct ReportCommand {
    static let help = """
        Usage: offertrack report [--since TS] [--until TS] [--as-of TS] [--by affiliate|campaign|message|day]
                                 [--format table|csv|json|html] [--out FILE] [--db PATH] [--rules PATH]

        The funnel per group: loaded presentations, those whose user was checked eligible (rule 4.4),
        conversions, attributed conversions, those that lapsed in their holding period (rule 4.6) and those
        still pending at --as-of (default now), the commission that qualified by then and the commission still
        pending. --since/--until/--as-of take RFC 3339 or YYYY-MM-DD (UTC midnight); --since/--until select
        [since, until): presentations by their time, conversions by theirs. Grouped by affiliate unless --by
        says otherwise; unattributed conversions count in the null group, shown as (none) in the table. The
        table writes amounts in the rules' currency (84.00 USD); CSV and JSON in integer minor units. html
        writes one self-contained page: the money at --as-of (commission qualified, pending and held, and the
        latest payout month's payable and carried totals), the daily series, the table, and the funnel per
        group as small multiples, charts as inline SVG.
        --out FILE writes the report to FILE (atomically) instead of stdout. --db may be given more than once:
        the journals (a fleet's central ones, each holding its users' records) are read as one.

        Example:
          offertrack report --since 2026-11-01 --until 2026-12-01 --by campaign --format csv
          offertrack report --as-of 2026-12-31 --rules /etc/offertrack/rules.json
          offertrack report --format html --out funnel.html --since 2026-11-01
        """

    /// What the report is written as: one of the row formats, or the HTML page.
    enum Rendering: Equatable {
        case rows(ReportFormat)
        case html
    }

    let options: CommonOptions
    let grouping: ReportGrouping
    let rendering: Rendering
    let range: ReportRange
    let asOf: Int64
    let outputPath: String?

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(
            arguments, valued: ["--db", "--rules", "--since", "--until", "--as-of", "--by", "--format", "--out"])
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "report takes no arguments") }
        options = CommonOptions(parsed, environment)
        let by = parsed.value("--by") ?? "affiliate"
        guard let grouping = ReportGrouping(rawValue: by) else {
            throw CLIError(.usage, "--by must be affiliate, campaign, message or day, not \(by)")
        }
        self.grouping = grouping
        let formatName = parsed.value("--format") ?? "table"
        if formatName == "html" {
            rendering = .html
        } else if let format = ReportFormat(rawValue: formatName) {
            rendering = .rows(format)
        } else {
            throw CLIError(.usage, "--format must be table, csv, json or html, not \(formatName)")
        }
        outputPath = parsed.value("--out")
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
        let readers = try options.openJournals()
        let text: String
        do {
            let rows = try FunnelQuery.rows(readers, grouping: grouping, range: range, rules: rules.rules, asOf: asOf)
            switch rendering {
            case .rows(let format):
                text = try format.render(rows, grouping: grouping, currency: rules.rules.currency)
            case .html:
                let daily =
                    grouping == .day
                    ? rows : try FunnelQuery.rows(readers, grouping: .day, range: range, rules: rules.rules, asOf: asOf)
                text = try HTMLReport(
                    rows: rows, grouping: grouping, daily: daily, range: range, asOf: asOf,
                    currency: rules.rules.currency, payouts: try Self.payouts(readers, asOf: asOf),
                    rulesSha256: rules.sha256, generatedAt: Clock.wallMilliseconds()
                ).render()
            }
        } catch let overflow as MoneyOverflow {
            throw CLIError(.dataError, "\(overflow); check the rules file's amounts")
        } catch let sealed as SealedDays.PartialSealedDay {
            throw CLIError(
                .dataError,
                "--since and --until inside a sealed day must be its 00:00Z: the days before "
                    + "\(Timestamp.formatDay(sealed.firstUnsealedDay)) are sealed (SPEC 12) and count whole; the "
                    + "first unsealed day is \(Timestamp.formatDay(sealed.firstUnsealedDay))")
        } catch let unreadable as PayoutError {
            throw CLIError(.dataError, "reading \(options.databasePaths.joined(separator: ", ")): \(unreadable)")
        } catch {
            throw CLIError(.ioError, "reading \(options.databasePaths.joined(separator: ", ")): \(error)")
        }
        return try write(text)
    }

    /// The latest payout month that ended by `asOf`. A fleet's journals each store a published month, and a
    /// publication stopped part way leaves some without it: with several journals the month is shown only when all
    /// hold the same one, byte for byte; otherwise the page says they disagree rather than show one journal's view.
    static func payouts(_ readers: [ReadOnlyJournal], asOf: Int64) throws -> HTMLReport.Payouts {
        guard let current = PayoutMonth(containingDay: Timestamp.formatDay(asOf)) else { return .unpublished }
        let held = try readers.map { try $0.latestPublishedMonth(before: current.description) }
        guard let latest = held.first ?? nil else {
            return held.allSatisfy { $0 == nil } ? .unpublished : .journalsDisagree
        }
        guard held.allSatisfy({ $0?.month == latest.month && $0?.manifest == latest.manifest }) else {
            return .journalsDisagree
        }
        return .published(try PublishedPayouts(month: latest.month, manifest: latest.manifest))
    }

    private func write(_ text: String) throws(CLIError) -> Int32 {
        guard let outputPath else {
            try Output.write(text)
            return 0
        }
        do {
            try FileSystem.writeAtomically(Array(text.utf8), to: outputPath)
        } catch {
            throw CLIError(.cannotCreate, "writing \(outputPath): \(error)")
        }
        return 0
    }
}
