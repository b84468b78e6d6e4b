import OfferTrackDomain

/// `offertrack report --format html`: one self-contained page (SPEC section 6) that leads with money. In order:
/// the commission qualified, pending and held at `--as-of` and the latest payout month's payable and carried totals
/// as tiles; the daily series of presentations, conversions and commission; the report's rows as a table; the
/// funnel per group as small multiples. Charts are inline SVG.
///
/// Nothing is loaded from anywhere: no scripts, fonts, images or links. Every bar carries its number as text and
/// every chart a `<title>`, so the page reads without colour, in print and to a screen reader. It fits a 1280 px
/// window: long tokens wrap instead of widening the page.
public struct HTMLReport: Sendable {
    /// The report's rows, as `--format json` prints them.
    public var rows: [ReportRow]
    public var grouping: ReportGrouping
    /// The same report grouped by day, for the daily series.
    public var daily: [ReportRow]
    public var range: ReportRange
    public var asOf: Int64
    public var currency: String
    /// The latest payout month ended by `asOf`, as the journals hold it.
    public var payouts: Payouts
    /// The SHA-256 of the rules file's bytes.
    public var rulesSha256: String
    public var generatedAt: Int64

    public init(
        rows: [ReportRow], grouping: ReportGrouping, daily: [ReportRow], range: ReportRange, asOf: Int64,
        currency: String, payouts: Payouts, rulesSha256: String, generatedAt: Int64
    ) {
        self.rows = rows
        self.grouping = grouping
        self.daily = daily
        self.range = range
        self.asOf = asOf
        self.currency = currency
        self.payouts = payouts
        self.rulesSha256 = rulesSha256
        self.generatedAt = generatedAt
    }

    /// The page, ending in `\n`; `MoneyOverflow` when a total of money does not fit.
    public func render() throws(MoneyOverflow) -> String {
        var page = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>offertrack report by \(grouping.rawValue)</title>
            <style>\(Self.style)</style>
            </head>
            <body>

            """
        page += header()
        page += try money()
        page += try dailySeries()
        page += try table()
        page += funnels()
        page += footer()
        page += "</body>\n</html>\n"
        return page
    }

    private func header() -> String {
        let since = range.since.map(Timestamp.format) ?? "the first record"
        let until = range.until.map(Timestamp.format) ?? "the last record"
        return """
            <header>
            <h1>Subscription offer money and funnel by \(grouping.rawValue)</h1>
            <p class="facts">Seen as of <strong>\(Timestamp.format(asOf))</strong>; presentations and conversions \
            from \(Self.escape(since)) to \(Self.escape(until)), each by its own time; amounts in \
            \(Self.escape(currency)).</p>
            </header>

            """
    }

    private func footer() -> String {
        """
        <footer>
        <dl class="facts">
        <dt>Rules file SHA-256</dt><dd><code>\(Self.escape(rulesSha256))</code></dd>
        <dt>Generated</dt><dd>\(Timestamp.format(generatedAt))</dd>
        </dl>
        </footer>

        """
    }

    // MARK: - Helpers

    func label(_ key: String?) -> String { key ?? "(none)" }

    /// `84.00 USD`: the amount in the currency's major unit, as the table format writes it, and the currency.
    static func amount(_ minor: Int64, _ currency: String) -> String {
        Money.format(minor, currency: currency) + " " + escape(currency)
    }

    static func money(_ minor: Int64, _ currency: String) -> String { Money.format(minor, currency: currency) }

    /// Text safe inside HTML elements and double-quoted attributes.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// System fonts only; patterns and labels carry meaning, colours only help. Text may wrap a long token anywhere
    /// (`overflow-wrap:anywhere`), so no key or hash widens the page past its window; in the table only the group
    /// names do (headers wrap between words, numbers stay whole).
    static let style = """
        *{box-sizing:border-box}\
        body{font:15px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em auto;max-width:80em;color:#111;\
        padding:0 1em;overflow-wrap:anywhere}h1{font-size:1.5em;margin:0 0 .2em}\
        h2{font-size:1.2em;border-bottom:1px solid #999;margin-top:1.8em}h3{font-size:1em;margin:1em 0 .4em}\
        .facts{color:#333;margin:0}dl.facts{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}\
        dt{font-weight:600}dd{margin:0}footer{margin-top:2em;border-top:1px solid #999;padding-top:.5em}\
        .tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(15em,1fr));gap:.8em;margin:.6em 0}\
        .tile{border:1px solid #999;border-left:.5em solid #4a6fa5;border-radius:.3em;padding:.6em .9em}\
        .tile dt{font-weight:600}.tile .amount{font-size:2em;font-weight:700;font-variant-numeric:tabular-nums;\
        line-height:1.2}.tile .how{color:#333;font-size:.9em}.tile.qualified{border-left-color:#1d5c41}\
        .tile.pending{border-left-color:#c08a2e}.tile.held{border-left-color:#8a6d3b}\
        .tile.payable{border-left-color:#2f7d5b}.tile.carried{border-left-color:#777}.note{color:#333}\
        figure{margin:1em 0;break-inside:avoid}figcaption{font-weight:600}svg{max-width:100%;height:auto}\
        .label,.value,.tick,.scale{font:12px system-ui,sans-serif;fill:#111}.bar{fill:#4a6fa5}\
        .bar.eligible{fill:#6b8cc0}.bar.conversions{fill:#2f7d5b}.bar.attributed{fill:#3f9a70}\
        .bar.qualified{fill:#1d5c41}.bar.lapsed{fill:#b04a3a}.bar.voided{fill:#7a2f25}.bar.held{fill:#8a6d3b}\
        .bar.pending{fill:#c08a2e}.day{fill:#4a6fa5}.axis,.tickmark{stroke:#111}\
        .funnels{display:grid;grid-template-columns:repeat(auto-fill,minmax(18em,1fr));gap:.5em 1.5em}\
        .funnels figure{margin:.5em 0}.funnels figcaption{font-size:.9em}\
        .funnels .label,.funnels .value{font-size:10px}\
        table{border-collapse:collapse;width:100%;font-size:14px;overflow-wrap:normal}\
        th,td{border:1px solid #999;padding:.25em .4em}th[scope=row]{overflow-wrap:anywhere;min-width:9em;text-align:left}\
        td{text-align:right;font-variant-numeric:tabular-nums}tfoot{font-weight:600}caption{text-align:left}\
        @media print{body{margin:0;max-width:none}section{break-inside:avoid-page}}
        """
}
