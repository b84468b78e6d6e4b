import Foundation
import OfferTrackDomain
import Posix
import Simulator
import TestSupport
import Testing
import WireFormat

/// SPEC 7's conservation law under random late reviews, lapses and rule changes, through the daemon and the CLI:
/// after each daily export the files sum to the published days' total now, computed apart from the product's
/// journal and export code by the domain's pure rule 4 over the records the test generated.
@Suite struct ReviewExportPropertyTests {
    static let day = Timestamp.millisecondsPerDay
    /// The first exported day; ten days are exported, one after each batch of late records.
    static let firstDay = Timestamp.parseDay("2026-11-01") ?? 0
    static let affiliates: [String?] = ["aff-a", "aff-b", "aff-c", nil]
    static let decisions = ["void", "hold", "release"]
    static let reasons = ["fraud", "refund", "duplicate", "test", "policy", "other"]

    /// A rules file with a holding period of 24, 48 or 72 h and random amounts and hold flags for `*`, aff-a and
    /// aff-b.
    static func randomRules(_ random: inout SeededGenerator) -> String {
        let rules = ["*", "aff-a", "aff-b"].map { token in
            let hold = random.roll(4) == 0 ? #","hold":true"# : ""
            return #"{"affiliateToken":"\#(token)","amountMinor":\#(random.roll(5000))\#(hold)}"#
        }
        let holding = [24, 48, 72][random.roll(3)]
        return #"{"currency":"USD","holdingPeriodHours":\#(holding),"rules":[\#(rules.joined(separator: ","))]}"#
    }

    /// What the published days earn now: every attributed conversion with an affiliate token, qualifying on a
    /// published day, neither lapsed, voided nor held, at its rule 5 amount.
    static func publishedTotal(records lines: [String], rules: String, publishedThrough last: Int64) throws -> Int64 {
        let settings = try RulesFile(bytes: Array(rules.utf8)).rules
        var byUser: [String: [Record]] = [:]
        for line in lines {
            guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else {
                Issue.record("the test generated an invalid record: \(line)")
                continue
            }
            byUser[record.user, default: []].append(record)
        }
        var total: Int64 = 0
        for records in byUser.values {
            guard let conversion = Attribution.attribute(userRecords: records, settings: settings.settings).conversion
            else { continue }
            let evaluated = EvaluatedConversion(conversion, rules: settings)
            guard let qualifiesAt = evaluated.qualifiesAt, evaluated.withheldState == nil,
                conversion.presentation?.offer.affiliateToken != nil
            else { continue }
            let day = qualifiesAt / Self.day * Self.day
            if day >= Self.firstDay && day <= last { total += evaluated.commission.amountMinor }
        }
        return total
    }

    @Test func everyExportKeepsTheFilesEqualToThePublishedDaysTotalNow() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("everyExportKeepsTheFilesEqualToThePublishedDaysTotalNow: seed \(seed)")
        var random = SeededGenerator(seed: seed)
        var rules = Self.randomRules(&random)
        guard let running = try RulesDaemon(rules: rules) else { return }
        let (daemon, rulesPath, out) = (running.daemon, running.rules, running.out)
        let client = try LineClient(path: daemon.socketPath)

        // Conversions from four days before the first exported day to the last one, at whole seconds.
        var conversions: [(name: String, ts: Int64)] = []
        func convert(_ count: Int) -> [String] {
            (0..<count).flatMap { _ -> [String] in
                let name = "\(conversions.count)"
                let ts = Self.firstDay - 4 * Self.day + Int64(random.roll(14 * 86_400)) * 1000
                conversions.append((name, ts))
                return ReviewRecords.conversion(name, at: ts, affiliate: Self.affiliates[random.roll(4)])
            }
        }
        var sent: [String] = []
        var counter = 0
        func lateRecords() -> [String] {
            var lines = convert(3)
            for _ in 0..<12 {
                let (name, ts) = conversions[random.roll(conversions.count)]
                counter += 1
                if random.roll(4) == 0 {
                    // A lapse, within the holding period or after it.
                    lines.append(
                        ReviewRecords.lapse(
                            "l-\(counter)", user: "u-\(name)", at: ts + Int64(1 + random.roll(60)) * 3_600_000))
                    continue
                }
                let decision = Self.decisions[random.roll(3)]
                let reason = decision == "release" && random.roll(2) == 0 ? nil : Self.reasons[random.roll(6)]
                // Any time: before the conversion, or long after; a third reuse an earlier review's time exactly.
                var at = ts + Int64(random.roll(20 * 24) - 3 * 24) * 3_600_000
                if random.roll(3) == 0,
                    let earlier = (sent + lines).last(where: { $0.contains(#""conversion":"o-\#(name)""#) }),
                    case .valid(let record) = RecordValidator.validate(Array(earlier.utf8))
                {
                    at = record.ts
                }
                lines.append(
                    ReviewRecords.review(
                        "r-\(random.roll(1000))-\(counter)", user: "u-\(name)", conversion: "o-\(name)", decision,
                        reason: reason, at: at))
            }
            return lines
        }

        var batch = convert(60)
        for index in 0..<10 {
            let answers = client.exchange(batch)
            #expect(answers.count == batch.count && answers.allSatisfy { $0.status == "accepted" }, "seed \(seed)")
            sent += batch
            if index > 0 && random.roll(2) == 0 {
                rules = Self.randomRules(&random)
                try running.write(rules: rules)
                if random.roll(2) == 0 {
                    daemon.notify.reset()
                    daemon.signal(Signals.hangup)
                    #expect(daemon.notify.waitFor(line: "READY=1") != nil)
                }
            }
            let date = Self.firstDay + Int64(index) * Self.day
            let export = try CLI.run([
                "export", "--db", daemon.databasePath, "--rules", rulesPath, "--date", Timestamp.formatDay(date),
                "--out", out,
            ])
            #expect(export.status == 0, "seed \(seed): \(export.output)")
            let expected = try Self.publishedTotal(records: sent, rules: rules, publishedThrough: date)
            let exported = try ExportFiles.totalAmount(out)
            #expect(exported == expected, "seed \(seed): after \(Timestamp.formatDay(date)) under \(rules)")
            guard exported == expected else { break }
            batch = lateRecords()
        }
        // The run did exercise adjustments: some rows of published days were reversed.
        let adjustments = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasSuffix(".csv") }
            .flatMap { name in try String(contentsOfFile: "\(out)/\(name)", encoding: .utf8).split(separator: "\n") }
            .filter { $0.hasPrefix("adjustment,") && $0.contains(",-") }
        #expect(!adjustments.isEmpty, "seed \(seed): no reversal in ten exports")
        // The daemon's join under the last rules agrees with a recomputation.
        daemon.notify.reset()
        daemon.signal(Signals.hangup)
        #expect(daemon.notify.waitFor(line: "READY=1") != nil)
        let verify = try CLI.run(["verify", "--db", daemon.databasePath, "--rules", rulesPath])
        #expect(verify.status == 0, "seed \(seed): \(verify.output)")
        running.stop()
    }
}

extension SeededGenerator {
    /// A uniform integer in `0..<bound`.
    fileprivate mutating func roll(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &self) }
}
