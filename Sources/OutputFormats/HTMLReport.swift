import OfferTrackDomain

/// `offertrack report --format html`: one self-contained page (SPEC section 6) with the report's rows as a table,
/// the funnel per group and the daily series of presentations, conversions and commission, drawn as inline SVG.
///
/// Nothing is loaded from anywhere: no scripts, fonts, images or links. Every bar carries its number as text and
/// every chart a `<title>`, so the page reads without colour, in print and to a screen reader.
public struct HTMLReport: Sendable {
    /// The report's rows, as `--format json` prints them.
    public var rows: [ReportRow]
    public var grouping: ReportGrouping
    /// The same report grouped by day, for the daily series.
    public var daily: [ReportRow]
    public var range: ReportRange
    public var asOf: Int64
    public var currency: String
    /// The SHA-256 of the rules file's bytes.
    public var rulesSha256: String
    public var generatedAt: Int64

    public init(
        rows: [ReportRow], grouping: ReportGrouping, daily: [ReportRow], range: ReportRange, asOf: Int64,
        currency: String, rulesSha256: String, generatedAt: Int64
    ) {
        self.rows = rows
        self.grouping = grouping
        self.daily = daily
        self.range = range
        self.asOf = asOf
        self.currency = currency
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
        page += funnel()
        page += try dailySeries()
        page += try table()
        page += "</body>\n</html>\n"
        return page
    }

    // MARK: - Sections

    private func header() -> String {
        let since = range.since.map(Timestamp.format) ?? "the first record"
        let until = range.until.map(Timestamp.format) ?? "the last record"
        return """
            <header>
            <h1>Subscription offer funnel by \(grouping.rawValue)</h1>
            <dl class="facts">
            <dt>Range</dt><dd>\(Self.escape(since)) to \(Self.escape(until)) (presentations and conversions by their own time)</dd>
            <dt>Seen as of</dt><dd>\(Timestamp.format(asOf))</dd>
            <dt>Money</dt><dd>\(Self.escape(currency))</dd>
            <dt>Rules file SHA-256</dt><dd><code>\(Self.escape(rulesSha256))</code></dd>
            <dt>Generated</dt><dd>\(Timestamp.format(generatedAt))</dd>
            </dl>
            </header>

            """
    }

    /// One horizontal bar chart per group: presented → eligible → conversions → attributed → qualified, with
    /// lapsed and pending beside them.
    private func funnel() -> String {
        var out = "<section>\n<h2>Funnel per \(grouping.rawValue)</h2>\n"
        if rows.isEmpty { out += "<p>No presentations or conversions in this range.</p>\n" }
        for row in rows {
            let stages: [(String, Int)] = [
                ("presented", row.presented), ("eligible", row.presentedEligible), ("conversions", row.conversions),
                ("attributed", row.attributed), ("qualified", row.qualified), ("lapsed", row.lapsed),
                ("voided", row.voided), ("held", row.held), ("pending", row.pending),
            ]
            let name = label(row.key)
            let largest = max(1, stages.map(\.1).max() ?? 1)
            let barHeight = 18
            let height = stages.count * (barHeight + 6) + 8
            let title = "Funnel for \(name): " + stages.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
            out += "<figure>\n<figcaption>\(Self.escape(name)): \(Self.money(row.commissionMinor, currency)) "
            out += "\(Self.escape(currency)) qualified, \(Self.money(row.pendingCommissionMinor, currency)) pending, "
            out += "\(Self.money(row.heldCommissionMinor, currency)) held"
            out += "</figcaption>\n"
            out += "<svg role=\"img\" viewBox=\"0 0 640 \(height)\" width=\"640\" height=\"\(height)\">"
            out += "<title>\(Self.escape(title))</title>\n"
            for (index, stage) in stages.enumerated() {
                let y = 4 + index * (barHeight + 6)
                let width = stage.1 * 420 / largest
                out += "<text x=\"0\" y=\"\(y + 13)\" class=\"label\">\(stage.0)</text>"
                out +=
                    "<rect x=\"100\" y=\"\(y)\" width=\"\(width)\" height=\"\(barHeight)\" class=\"bar \(stage.0)\"/>"
                out += "<text x=\"\(106 + width)\" y=\"\(y + 13)\" class=\"value\">\(stage.1)</text>\n"
            }
            out += "</svg>\n</figure>\n"
        }
        return out + "</section>\n"
    }

    /// Three charts over the same days: presentations, conversions and qualified commission per day.
    private func dailySeries() throws(MoneyOverflow) -> String {
        var out = "<section>\n<h2>Per day</h2>\n"
        guard !daily.isEmpty else { return out + "<p>No days in this range.</p>\n</section>\n" }
        let days = Self.everyDay(daily)
        let series: [(String, [Int64], (Int64) -> String)] = [
            ("Presentations", days.map { Int64($0.presented) }, { String($0) }),
            ("Conversions", days.map { Int64($0.conversions) }, { String($0) }),
            ("Qualified commission (\(currency))", days.map(\.commissionMinor), { Self.money($0, currency) }),
        ]
        for (name, values, format) in series {
            out += try chart(name: name, values: values, days: days.map { $0.key ?? "" }, format: format)
        }
        return out + "</section>\n"
    }

    /// The by-day rows with the days between them that have none filled in as empty rows, so the charts keep
    /// time to scale.
    static func everyDay(_ rows: [ReportRow]) -> [ReportRow] {
        guard let first = rows.first?.key.flatMap(Timestamp.parseDay),
            let last = rows.last?.key.flatMap(Timestamp.parseDay), last >= first
        else { return rows }
        var byDay: [String: ReportRow] = [:]
        for row in rows { if let key = row.key { byDay[key] = row } }
        var filled: [ReportRow] = []
        var start = first
        while start <= last {
            let key = Timestamp.formatDay(start)
            filled.append(byDay[key] ?? ReportRow(key: key))
            start += Timestamp.millisecondsPerDay
        }
        return filled
    }

    private func chart(
        name: String, values: [Int64], days: [String], format: (Int64) -> String
    ) throws(MoneyOverflow) -> String {
        let largest = max(1, values.max() ?? 1)
        let step = max(4, min(40, 600 / max(1, values.count)))
        let plotHeight: Int64 = 120
        let width = 60 + values.count * step + 20
        let labelEvery = max(1, (values.count * 60) / 600)
        let total = try Money.total(values)
        var out = "<figure>\n<figcaption>\(Self.escape(name)) per day: total \(format(total)), "
        out += "largest day \(format(largest))</figcaption>\n"
        out += "<svg role=\"img\" viewBox=\"0 0 \(width) 170\" width=\"\(width)\" height=\"170\">"
        out += "<title>\(Self.escape(name)) per day from \(days.first ?? "") to \(days.last ?? "")</title>\n"
        out += "<line x1=\"58\" y1=\"130\" x2=\"\(width - 10)\" y2=\"130\" class=\"axis\"/>"
        out += "<text x=\"54\" y=\"14\" class=\"tick\" text-anchor=\"end\">\(format(largest))</text>"
        out += "<text x=\"54\" y=\"130\" class=\"tick\" text-anchor=\"end\">0</text>\n"
        for (index, value) in values.enumerated() {
            let height = value * plotHeight / largest
            let x = 60 + index * step
            let day = days[index]
            out +=
                "<rect x=\"\(x)\" y=\"\(130 - height)\" width=\"\(max(2, step - 2))\" height=\"\(height)\" class=\"day\">"
            out += "<title>\(Self.escape(day)): \(format(value))</title></rect>"
            if index % labelEvery == 0 {
                out += "<text x=\"\(x)\" y=\"146\" class=\"tick\">\(Self.escape(String(day.suffix(5))))</text>"
            }
            out += "\n"
        }
        return out + "</svg>\n</figure>\n"
    }

    /// The rows as `--format json` has them (money in the currency's units; the minor units in `data-minor`),
    /// and a totals line.
    private func table() throws(MoneyOverflow) -> String {
        let columns: [(String, String)] = [
            ("presented", "Presented"), ("presentedEligible", "Eligible"), ("conversions", "Conversions"),
            ("attributed", "Attributed"), ("lapsed", "Lapsed"), ("voided", "Voided"), ("held", "Held"),
            ("pending", "Pending"),
        ]
        var out = "<section>\n<h2>Table</h2>\n<table>\n<caption>The report by \(grouping.rawValue), as of "
        out += "\(Timestamp.format(asOf)); amounts in \(Self.escape(currency))</caption>\n<thead><tr>"
        out += "<th scope=\"col\">\(grouping.rawValue.prefix(1).uppercased() + grouping.rawValue.dropFirst())</th>"
        for column in columns { out += "<th scope=\"col\">\(column.1)</th>" }
        out += "<th scope=\"col\">Commission</th><th scope=\"col\">Pending commission</th>"
        out += "<th scope=\"col\">Held commission</th></tr></thead>\n<tbody>\n"
        for row in rows {
            out += tableRow(row, header: label(row.key), key: row.key.map(Self.escape) ?? "", columns: columns)
        }
        out += "</tbody>\n<tfoot>\n"
        let total = try ReportRow.total(of: rows, key: nil)
        out += tableRow(total, header: "Total", key: "", columns: columns, isTotal: true)
        return out + "</tfoot>\n</table>\n</section>\n"
    }

    private func tableRow(
        _ row: ReportRow, header: String, key: String, columns: [(String, String)], isTotal: Bool = false
    ) -> String {
        let counts: [String: Int] = [
            "presented": row.presented, "presentedEligible": row.presentedEligible, "conversions": row.conversions,
            "attributed": row.attributed, "lapsed": row.lapsed, "voided": row.voided, "held": row.held,
            "pending": row.pending,
        ]
        let keyAttribute = isTotal ? "" : row.key == nil ? " data-key-null" : " data-key=\"\(key)\""
        var out =
            "<tr class=\"\(isTotal ? "total" : "group")\"\(keyAttribute)><th scope=\"row\">\(Self.escape(header))</th>"
        for column in columns { out += "<td data-field=\"\(column.0)\">\(counts[column.0] ?? 0)</td>" }
        for (field, amount) in [
            ("commissionMinor", row.commissionMinor), ("pendingCommissionMinor", row.pendingCommissionMinor),
            ("heldCommissionMinor", row.heldCommissionMinor),
        ] {
            out += "<td data-field=\"\(field)\" data-minor=\"\(amount)\">\(Self.money(amount, currency))</td>"
        }
        return out + "</tr>\n"
    }

    // MARK: - Helpers

    private func label(_ key: String?) -> String { key ?? "(none)" }

    private static func money(_ minor: Int64, _ currency: String) -> String { Money.format(minor, currency: currency) }

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

    /// System fonts only; patterns and labels carry meaning, colours only help.
    static let style = """
        body{font:15px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:60em;color:#111;\
        padding:0 1em}h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #999;margin-top:2em}\
        dl.facts{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}dt{font-weight:600}dd{margin:0}\
        figure{margin:1em 0;break-inside:avoid}figcaption{font-weight:600}svg{max-width:100%;height:auto}\
        .label,.value,.tick{font:12px system-ui,sans-serif;fill:#111}.bar{fill:#4a6fa5}.bar.eligible{fill:#6b8cc0}\
        .bar.conversions{fill:#2f7d5b}.bar.attributed{fill:#3f9a70}.bar.qualified{fill:#1d5c41}\
        .bar.lapsed{fill:#b04a3a}.bar.voided{fill:#7a2f25}.bar.held{fill:#8a6d3b}.bar.pending{fill:#c08a2e}.day{fill:#4a6fa5}.axis{stroke:#111}\
        table{border-collapse:collapse;width:100%}th,td{border:1px solid #999;padding:.25em .5em}\
        td{text-align:right;font-variant-numeric:tabular-nums}tfoot{font-weight:600}caption{text-align:left}\
        @media print{body{margin:0;max-width:none}section{break-inside:avoid-page}}
        """
}
