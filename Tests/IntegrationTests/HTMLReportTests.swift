import Foundation
import JSON
import OfferTrackDomain
import OutputFormats
import Simulator
import TestSupport
import Testing
import WireFormat

/// `report --format html` rendered by a real browser: no console errors, no network requests, and the numbers in
/// the page equal `--format json`'s.
@Suite(.serialized) struct HTMLReportTests {
    static let rules =
        #"{"currency":"EUR","holdingPeriodHours":1080,"rules":[{"affiliateToken":"*","amountMinor":450}]}"#

    /// Chromium's own pages' console lines (seen on a loaded machine) are not the page's; the page's are kept.
    @Test func consoleLinesOfChromiumsOwnPagesAreLeftOut() {
        let log = """
            [30717:30717:1203/135652.081504:INFO:CONSOLE:574] "Slow network is detected. See https://www.chromestatus.com/feature/5636954674692096 for more details.", source: chrome://resources/cr_components/composebox/composebox_input.js (574)
            [1:1:1203/1.0:INFO:CONSOLE:3] "from the page", source: file:///tmp/report.html (3)
            [1:1:1203/1.0:INFO:CONSOLE:0] "no source"
            [1:1:1203/1.0:INFO:other.cc:1] not a console line
            """
        #expect(
            Chromium.pageConsoleLines(log).map { $0.contains("from the page") || $0.contains("no source") } == [
                true, true,
            ])
    }

    static func cli(_ arguments: [String]) throws -> String {
        let outcome = try Shell.run(Binaries.cli, arguments, environment: ["PATH": "/usr/bin:/bin"])
        #expect(outcome.status == 0, "offertrack \(arguments): \(outcome.output)")
        return outcome.output
    }

    @Test func theBrowserShowsTheJSONNumbersAndFetchesNothing() throws {
        let directory = ScratchDirectory()
        let rulesPath = directory.file("rules.json")
        try Self.rules.write(toFile: rulesPath, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rulesPath])
        guard daemon.waitReady() else { return }
        let lines = Array(
            WorkloadSimulator(users: 400, seed: 3, start: Timestamp.parseDay("2026-09-01") ?? 0, days: 60).lines)
        #expect(try LineClient(path: daemon.socketPath).exchange(lines).count == lines.count)
        let db = daemon.databasePath
        let common = ["report", "--db", db, "--rules", rulesPath, "--as-of", "2026-11-15", "--by", "campaign"]
        let page = directory.file("report.html")
        _ = try Self.cli(common + ["--format", "html", "--out", page])
        let html = try String(contentsOfFile: page, encoding: .utf8)
        // Self-contained: nothing to fetch, nothing to run.
        for external in ["<script", "<link", "src=", "http://", "https://", "url(", "@import"] {
            #expect(!html.contains(external), "the page contains \(external)")
        }
        let rendering = try Chromium.render(page, in: directory)
        #expect(rendering.console.isEmpty, "\(rendering.console)")
        // What Chromium fetches by itself for a blank page is not the page's doing.
        let blank = directory.file("blank.html")
        try "<!doctype html><title>blank</title>".write(toFile: blank, atomically: true, encoding: .utf8)
        let own = try Chromium.render(blank, in: directory).requests
        #expect(rendering.requests.subtracting(own).isEmpty, "\(rendering.requests.subtracting(own))")
        // The check sees a request when there is one (a page with an image from elsewhere).
        let fetching = directory.file("fetching.html")
        try html.replacingOccurrences(of: "</body>", with: "<img src=\"http://127.0.0.1:9/pixel.png\" alt=\"\"></body>")
            .write(toFile: fetching, atomically: true, encoding: .utf8)
        #expect(try Chromium.render(fetching, in: directory).requests.contains("http://127.0.0.1:9/pixel.png"))
        // And a console message when the page logs one (only Chromium's own pages' lines are left out).
        let logging = directory.file("logging.html")
        try html.replacingOccurrences(of: "</body>", with: "<script>console.log('from the page')</script></body>")
            .write(toFile: logging, atomically: true, encoding: .utf8)
        #expect(try Chromium.render(logging, in: directory).console.contains { $0.contains("from the page") })
        // A real picture (PNG signature, some kilobytes), and the table's numbers equal the JSON report's.
        #expect(rendering.png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && rendering.png.count > 20_000)
        let shown = ReportTable.values(rendering.dom)
        guard case .array(let rows) = try JSONParser.parse(Array(try Self.cli(common + ["--format", "json"]).utf8))
        else {
            Issue.record("the JSON report is not an array")
            return
        }
        #expect(rows.count == shown.count && rows.count > 3)
        var sawLapsedAndPending = (false, false)
        for case .object(let row) in rows {
            let key: String
            // As a serialized DOM writes an attribute value.
            if case .string(let text)? = row["key"] {
                key = text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            } else {
                key = ""
            }
            let fields = try #require(shown[key], "no table row for \(key)")
            for name in [
                "presented", "presentedEligible", "conversions", "attributed", "lapsed", "pending", "commissionMinor",
                "pendingCommissionMinor",
            ] {
                guard case .number(let number)? = row[name] else {
                    Issue.record("\(name) missing in the JSON row \(key)")
                    continue
                }
                #expect(fields[name] == number.int64Value, "\(key) \(name)")
            }
            if case .number(let n)? = row["lapsed"], n.int64Value ?? 0 > 0 { sawLapsedAndPending.0 = true }
            if case .number(let n)? = row["pending"], n.int64Value ?? 0 > 0 { sawLapsedAndPending.1 = true }
        }
        #expect(sawLapsedAndPending == (true, true))
        daemon.signal(2)
        #expect(daemon.waitExit() == 0)
    }

    /// What the browser measures on a page (`measure`): the window and page widths, the money tiles, each daily
    /// chart's last day and where its axis and labels end, and the sections' headings in order.
    struct PageFacts: Decodable {
        struct Tile: Decodable {
            let money: String
            let minor: String
            let currency: String
            let amount: String
        }

        struct DailyChart: Decodable {
            let days: Int
            let lastBarDay: String
            let tickDays: [String]
            let lastBarRight: Double
            let axisRight: Double
            let ticksRight: Double
        }

        let innerWidth: Int
        let scrollWidth: Int
        let clientWidth: Int
        let tiles: [Tile]
        let charts: [DailyChart]
        let headings: [String]

        /// The tiles named `money`: minor units by currency.
        func figures(_ money: String) -> [String: Int64] {
            var figures: [String: Int64] = [:]
            for tile in tiles where tile.money == money { figures[tile.currency] = Int64(tile.minor) }
            return figures
        }
    }

    /// Evaluated in the loaded page by the DevTools protocol (the page has no script of its own).
    static let measure = """
        (() => {
          const right = element => element.getBoundingClientRect().right;
          const charts = [...document.querySelectorAll("svg.daily")].map(svg => {
            const bars = [...svg.querySelectorAll("rect.day")];
            const ticks = [...svg.querySelectorAll("text.tick")];
            const last = bars[bars.length - 1];
            return {days: bars.length, lastBarDay: last.dataset.day, tickDays: ticks.map(tick => tick.dataset.day),
              lastBarRight: right(last), axisRight: right(svg.querySelector("line.axis")),
              ticksRight: Math.max(...ticks.map(right))};
          });
          const tiles = [...document.querySelectorAll("[data-money]")].map(tile => ({money: tile.dataset.money,
            minor: tile.dataset.minor, currency: tile.dataset.currency,
            amount: tile.querySelector(".amount").textContent}));
          return {innerWidth, scrollWidth: document.documentElement.scrollWidth,
            clientWidth: document.documentElement.clientWidth, tiles, charts,
            headings: [...document.querySelectorAll("h2")].map(heading => heading.textContent)};
        })()
        """

    static let payoutRules = """
        {"currency":"EUR","holdingPeriodHours":1080,"payoutMinimumMinor":1000,
         "rules":[{"affiliateToken":"*","amountMinor":450},{"affiliateToken":"aff-42","amountMinor":450,"hold":true}]}
        """

    /// The longest affiliate token there may be (64 characters, no place to break a line).
    static let longToken = String(repeating: "Tk9_", count: 16)

    /// `report --format json` with `arguments`: its rows.
    static func jsonRows(_ arguments: [String]) throws -> [JSONObject] {
        guard case .array(let rows) = try JSONParser.parse(Array(try cli(arguments + ["--format", "json"]).utf8))
        else { throw ToolFailure("the JSON report is not an array") }
        return rows.compactMap { row in
            guard case .object(let object) = row else { return nil }
            return object
        }
    }

    /// The sums of `field` over the JSON report's rows.
    static func sum(_ field: String, _ rows: [JSONObject]) -> Int64 {
        rows.reduce(0) { total, row in
            guard case .number(let number)? = row[field] else { return total }
            return total + (number.int64Value ?? 0)
        }
    }

    /// The days from the first of `days` (`YYYY-MM-DD`, in order) to the last, both counted.
    static func dayCount(_ days: [String]) -> Int {
        guard let first = days.first.flatMap(Timestamp.parseDay), let last = days.last.flatMap(Timestamp.parseDay)
        else { return 0 }
        return Int((last - first) / Timestamp.millisecondsPerDay) + 1
    }

    /// The `--format html` page with `arguments`, measured in a 1280 px window.
    static func measuredPage(_ arguments: [String], in directory: ScratchDirectory) throws -> PageFacts {
        let page = directory.file("money-\(UUID().uuidString).html")
        _ = try cli(arguments + ["--format", "html", "--out", page])
        return try Chromium.evaluate(measure, as: PageFacts.self, in: page, directory: directory)
    }

    /// The money tiles show the JSON report's sums, each as its currency writes it, in a page that fits the window;
    /// the daily charts span the JSON report's days by day, from the first to the last and not past it.
    static func checkMoneyAndLayout(_ facts: PageFacts, rows: [JSONObject], days: [String], currency: String) {
        let lastDay = days.last
        #expect(
            facts.headings.map { String($0.prefix { $0 != " " }) } == ["Money", "Per", "Table", "Funnel"],
            "\(facts.headings)")
        for (money, field) in [
            ("qualified", "commissionMinor"), ("pending", "pendingCommissionMinor"), ("held", "heldCommissionMinor"),
        ] {
            #expect(facts.figures(money) == [currency: sum(field, rows)], "\(money)")
        }
        for tile in facts.tiles {
            #expect(tile.amount == Money.format(Int64(tile.minor) ?? 0, currency: tile.currency) + " " + tile.currency)
        }
        // No horizontal scroll in a 1280 px window (its vertical scroll bar included).
        #expect(facts.innerWidth == 1280)
        #expect(facts.scrollWidth <= 1280 && facts.scrollWidth <= facts.clientWidth, "\(facts.scrollWidth)")
        #expect(facts.charts.count == 3)
        for chart in facts.charts {
            #expect(chart.days == Self.dayCount(days), "from \(days.first ?? "") to \(lastDay ?? "")")
            #expect(chart.lastBarDay == lastDay && chart.tickDays.last == lastDay, "\(chart.tickDays)")
            #expect(chart.tickDays.allSatisfy { $0 <= lastDay ?? "" })
            // Neither the axis nor a label runs past the last day's bar (half a pixel for rounding).
            #expect(chart.axisRight <= chart.lastBarRight + 0.5 && chart.ticksRight <= chart.lastBarRight + 0.5)
        }
    }

    /// Finance's first question first: tiles with the JSON report's qualified, pending and held sums and, once a
    /// payout month is published, its manifest's payable and carried totals; then the daily charts, ending at the
    /// last day with data; a page that fits 1280 px with a 64-character token in its table.
    @Test func theMoneyLeadsAndThePageFitsA1280PixelWindow() throws {
        let directory = ScratchDirectory()
        let rulesPath = directory.file("rules.json")
        try Self.payoutRules.write(toFile: rulesPath, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rulesPath])
        guard daemon.waitReady() else { return }
        let long =
            #"{"type":"offer.presented","id":"long-token-1","ts":"2026-10-10T10:00:00Z","user":"u-long","#
            + #""offer":{"action":"subscribe","affiliateToken":"\#(Self.longToken)"}}"#
        let lines =
            Array(WorkloadSimulator(users: 400, seed: 3, start: Timestamp.parseDay("2026-09-01") ?? 0, days: 60).lines)
            + [long]
        #expect(try LineClient(path: daemon.socketPath).exchange(lines).count == lines.count)
        let db = daemon.databasePath
        let common = ["report", "--db", db, "--rules", rulesPath, "--as-of", "2026-11-15"]
        let rows = try Self.jsonRows(common)
        #expect(rows.contains { $0["key"] == .string(Self.longToken) })
        #expect(
            ["commissionMinor", "pendingCommissionMinor", "heldCommissionMinor"].allSatisfy { Self.sum($0, rows) > 0 })
        let days: [String] = try Self.jsonRows(common + ["--by", "day"]).compactMap { row in
            guard case .string(let day)? = row["key"] else { return nil }
            return day
        }
        #expect(days.count > 30)

        // Nothing published: the commission tiles alone.
        let before = try Self.measuredPage(common, in: directory)
        Self.checkMoneyAndLayout(before, rows: rows, days: days, currency: "EUR")
        #expect(before.tiles.map(\.money) == ["qualified", "pending", "held"])

        // September and October's export days and payout statements published: October's totals, the latest month
        // that ended by --as-of, beside them.
        var day = Timestamp.parseDay("2026-09-01") ?? 0
        let publishing = ["--db", db, "--rules", rulesPath, "--out", directory.path]
        while Timestamp.formatDay(day) <= "2026-10-31" {
            _ = try Self.cli(["export", "--date", Timestamp.formatDay(day)] + publishing)
            day += Timestamp.millisecondsPerDay
        }
        for month in ["2026-09", "2026-10"] { _ = try Self.cli(["payouts", "--month", month] + publishing) }
        let manifest = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: directory.file("payouts-2026-10.manifest.json"))))
        let totals = try #require((manifest as? [String: Any])?["totals"] as? [String: [String: Int64]])
        let after = try Self.measuredPage(common, in: directory)
        Self.checkMoneyAndLayout(after, rows: rows, days: days, currency: "EUR")
        #expect(after.tiles.map(\.money) == ["qualified", "pending", "held", "payable", "carried"])
        #expect(after.figures("payable") == totals.mapValues { $0["payableMinor"] ?? -1 })
        #expect(after.figures("carried") == totals.mapValues { $0["carriedMinor"] ?? -1 })
        // Both figures mean something here: October pays some affiliates and carries others' balances.
        #expect(
            totals["EUR"].map { ($0["payableMinor"] ?? 0) > 0 && ($0["carriedMinor"] ?? 0) > 0 } == true, "\(totals)")
        daemon.signal(2)
        #expect(daemon.waitExit() == 0)
    }
}
