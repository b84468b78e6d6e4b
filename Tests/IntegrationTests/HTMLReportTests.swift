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

    /// The `data-field` cells of each group row of the page's table, keyed by `data-key` ("" for the null group).
    static func tableValues(_ dom: String) -> [String: [String: Int64]] {
        var rows: [String: [String: Int64]] = [:]
        for chunk in dom.components(separatedBy: "<tr class=\"group\"").dropFirst() {
            let row = chunk.components(separatedBy: "</tr>")[0]
            let head = row.prefix { $0 != ">" }
            var key = ""
            if let range = head.range(of: "data-key=\"") {
                key = String(head[range.upperBound...].prefix { $0 != "\"" })
            }
            var fields: [String: Int64] = [:]
            for cell in row.components(separatedBy: "<td data-field=\"").dropFirst() {
                let name = String(cell.prefix { $0 != "\"" })
                let value: Substring
                if let minor = cell.range(of: "data-minor=\"") {
                    value = cell[minor.upperBound...].prefix { $0 != "\"" }
                } else {
                    value = cell.drop { $0 != ">" }.dropFirst().prefix { $0 != "<" }
                }
                fields[name] = Int64(value)
            }
            rows[key] = fields
        }
        return rows
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
        let shown = Self.tableValues(rendering.dom)
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
}
