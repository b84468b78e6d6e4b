import Foundation
import OfferTrackDomain
import OutputFormats
import Posix
import TestSupport
import Testing

/// `offertrack payouts` through the real daemon and CLI (SPEC 7.1): two consecutive months with a balance carried
/// over and a negative one from a clawback, refusals naming the first missing day or month with nothing written,
/// immutable months, and a fleet's central journals giving the statement one daemon gives.
@Suite(.serialized) struct PayoutsEndToEndTests {
    /// H = 0; every conversion earns 500; balances under 1000 carry.
    static let rules =
        #"{"currency":"USD","payoutMinimumMinor":1000,"rules":[{"affiliateToken":"*","amountMinor":500}]}"#
    /// The same, and aff1's conversions now earn nothing (finance found it was not owed): a clawback.
    static let clawback =
        #"{"currency":"USD","payoutMinimumMinor":1000,"rules":[{"affiliateToken":"*","amountMinor":500},"#
        + #"{"affiliateToken":"aff1","amountMinor":0}]}"#

    /// A user checked eligible, shown `affiliate`'s offer and subscribing at `ts` (RFC 3339, at least a minute in).
    static func conversion(user: String, affiliate: String, at ts: String) -> [String] {
        let base = Timestamp.parse(ts) ?? 0
        let at = { (offset: Int64) in Timestamp.format(base + offset) }
        return [
            #"{"type":"capabilities","id":"c-\#(user)","ts":"\#(at(-60_000))","user":"\#(user)","authorization":"authorized","capabilities":2}"#,
            #"{"type":"offer.presented","id":"p-\#(user)","ts":"\#(at(-30_000))","user":"\#(user)","offer":{"action":"subscribe","affiliateToken":"\#(affiliate)"}}"#,
            #"{"type":"subscription.outcome","id":"o-\#(user)","ts":"\#(at(0))","user":"\#(user)","outcome":"subscribed","offerId":"p-\#(user)"}"#,
        ]
    }

    static let records =
        conversion(user: "u1", affiliate: "aff1", at: "2026-10-30T09:00:00Z")
        + conversion(user: "u2", affiliate: "aff1", at: "2026-10-30T10:00:00Z")
        + conversion(user: "u3", affiliate: "aff2", at: "2026-10-31T11:00:00Z")
        + conversion(user: "u4", affiliate: "aff2", at: "2026-11-10T12:00:00Z")

    static func cli(_ arguments: [String]) throws -> Shell.Outcome {
        try Shell.run(Binaries.cli, arguments, environment: ["PATH": "/usr/bin:/bin"])
    }

    static func read(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    static func dataLines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").dropFirst().map(String.init)
    }

    /// Exports every day from `first` through `last`, expecting each to succeed.
    static func export(
        _ first: String, through last: String, databases: [String], rules: String, out: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for day in PublishedDaysFixture.days(from: first, through: last) {
            let outcome = try cli(["export", "--rules", rules, "--date", day, "--out", out] + databases)
            #expect(outcome.status == 0, "\(day): \(outcome.output)", sourceLocation: sourceLocation)
        }
    }

    @Test func twoMonthsCarryABalanceAndANegativeOneAndRefuseEarlyMonths() throws {
        let directory = ScratchDirectory()
        let rules = directory.file("rules.json")
        let clawback = directory.file("clawback.json")
        let other = directory.file("other-minimum.json")
        try Self.rules.write(toFile: rules, atomically: true, encoding: .utf8)
        try Self.clawback.write(toFile: clawback, atomically: true, encoding: .utf8)
        try Self.rules.replacingOccurrences(of: "1000", with: "1").write(
            toFile: other, atomically: true, encoding: .utf8)
        let out = directory.file("out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules])
        guard daemon.waitReady() else { return }
        #expect(try LineClient(path: daemon.socketPath).exchange(Self.records).allSatisfy { $0.status == "accepted" })
        let db = ["--db", daemon.databasePath]
        func payouts(_ month: String, rules: String = rules) throws -> Shell.Outcome {
            try Self.cli(["payouts", "--rules", rules, "--month", month, "--out", out] + db)
        }
        try Self.export("2026-10-30", through: "2026-10-31", databases: db, rules: rules, out: out)
        // November's last day is not published: refused, naming the first day not published, nothing written.
        var refused = try payouts("2026-11")
        #expect(refused.status == 65 && refused.output.contains("export 2026-11-01 first"), "\(refused.output)")
        // The clawback: from November on, the rules say aff1's October conversions earn nothing.
        try Self.export("2026-11-01", through: "2026-11-15", databases: db, rules: clawback, out: out)
        refused = try payouts("2026-11")
        #expect(refused.status == 65 && refused.output.contains("2026-11-16"), "\(refused.output)")
        try Self.export("2026-11-16", through: "2026-11-30", databases: db, rules: clawback, out: out)
        // October is not published yet: November is refused naming it.
        refused = try payouts("2026-11")
        #expect(refused.status == 65 && refused.output.contains("payouts of 2026-10 first"), "\(refused.output)")
        refused = try payouts("2026-09")
        #expect(refused.status == 65 && refused.output.contains("never published"), "\(refused.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).allSatisfy { !$0.hasPrefix("payouts-") })

        let october = try payouts("2026-10")
        #expect(october.status == 0 && october.output.contains("published"), "\(october.output)")
        #expect(
            try Self.dataLines("\(out)/payouts-2026-10.csv") == [
                "aff1,USD,0,1000,1000,1000,0,2",  // at the minimum: paid
                "aff2,USD,0,500,500,0,500,1",  // under it: carried
            ])
        let november = try payouts("2026-11", rules: clawback)
        #expect(november.status == 0, "\(november.output)")
        #expect(
            try Self.dataLines("\(out)/payouts-2026-11.csv") == [
                "aff1,USD,0,-1000,-1000,0,-1000,4",  // two reversals of 500 and two rows of 0: a negative carry
                "aff2,USD,500,500,1000,1000,0,1",  // the carried 500 and a new 500 reach the minimum
            ])
        let manifest = try String(contentsOfFile: "\(out)/payouts-2026-11.manifest.json", encoding: .utf8)
        #expect(
            manifest.hasPrefix(
                #"{"month":"2026-11","lines":2,"minimumMinor":1000,"totals":{"USD":{"earnedMinor":-500,"payableMinor":1000,"carriedMinor":-1000}},"#
            ), "\(manifest)")
        // Every exported row of the two months is accounted for: paid, or carried by the last month.
        var exported: Int64 = 0
        for day in PublishedDaysFixture.days(from: "2026-10-30", through: "2026-11-30") {
            for line in try Self.dataLines("\(out)/commissions-\(day).csv") {
                exported += Int64(line.split(separator: ",", omittingEmptySubsequences: false)[9]) ?? 0
            }
        }
        #expect(exported == 1000 + 1000 + (-1000))

        // Published months are immutable: another minimum changes nothing, the bytes are the first ones.
        let before = try ["csv", "manifest.json"].map { try Self.read("\(out)/payouts-2026-11.\($0)") }
        try FileManager.default.removeItem(atPath: "\(out)/payouts-2026-11.csv")
        let again = try payouts("2026-11", rules: other)
        #expect(again.status == 0 && again.output.contains("rewrote"), "\(again.output)")
        #expect(try ["csv", "manifest.json"].map { try Self.read("\(out)/payouts-2026-11.\($0)") } == before)
        let status = try Self.cli(["status", "--socket", daemon.socketPath] + db)
        #expect(status.output.contains("last published payouts: 2026-11"), "\(status.output)")
        #expect(status.output.contains("first published export: 2026-10-30"), "\(status.output)")
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
    }

    @Test func aFleetsCentralJournalsGiveTheStatementOfOneDaemon() throws {
        let directory = ScratchDirectory()
        let server = try NATSServer(in: directory)
        let rules = directory.file("rules.json")
        try Self.rules.write(toFile: rules, atomically: true, encoding: .utf8)
        let common = ["--partitions-total", "4", "--stream-replicas", "1", "--rules", rules]
        let edge = try DaemonProcess(in: ScratchDirectory("ot-edge"), arguments: ["--forward", server.url] + common)
        let centrals = try [("0-1", "ot-central-a"), ("2,3", "ot-central-b")].map { partitions, label in
            try DaemonProcess(
                in: ScratchDirectory(label), arguments: ["--consume", server.url, "--partitions", partitions] + common)
        }
        let single = try DaemonProcess(in: ScratchDirectory("ot-single"), arguments: ["--rules", rules])
        guard edge.waitReady(), single.waitReady(), centrals.allSatisfy({ $0.waitReady() }) else { return }
        // Eight users over both affiliates, spread over the partitions.
        var lines: [String] = []
        for index in 1...8 {
            lines += Self.conversion(
                user: "user-\(index)", affiliate: index % 3 == 0 ? "aff2" : "aff1",
                at: "2026-10-3\(index % 2)T1\(index):00:00Z")
        }
        #expect(try LineClient(path: edge.socketPath).exchange(lines).allSatisfy { $0.status == "accepted" })
        #expect(try LineClient(path: single.socketPath).exchange(lines).allSatisfy { $0.status == "accepted" })
        let deadline = Date().addingTimeInterval(60)
        var held: [[String]] = []
        while Date() < deadline {
            held = try centrals.map { try JournalInspector.lines(of: $0.databasePath) }
            if held.map(\.count).reduce(0, +) >= lines.count { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(held.map(\.count).reduce(0, +) == lines.count && held.allSatisfy { !$0.isEmpty })
        let fleet = centrals.flatMap { ["--db", $0.databasePath] }
        let one = ["--db", single.databasePath]
        let outFleet = directory.file("out-fleet")
        let outOne = directory.file("out-one")
        for path in [outFleet, outOne] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        try Self.export("2026-10-30", through: "2026-10-31", databases: fleet, rules: rules, out: outFleet)
        try Self.export("2026-10-30", through: "2026-10-31", databases: one, rules: rules, out: outOne)
        let payouts = ["payouts", "--rules", rules, "--month", "2026-10"]
        let repeated = try Self.cli(payouts + ["--out", outFleet, "--db", centrals[0].databasePath] + fleet.prefix(2))
        #expect(repeated.status == 65 && repeated.output.contains("are the same journal"), "\(repeated.output)")
        let alone = try Self.cli(payouts + ["--out", outFleet, "--db", centrals[0].databasePath])
        #expect(alone.status == 65 && alone.output.contains("no journal given holds partitions 2,3"), "\(alone.output)")
        #expect(try Self.cli(payouts + ["--out", outFleet] + fleet).status == 0)
        #expect(try Self.cli(payouts + ["--out", outOne] + one).status == 0)
        let fleetCSV = try Self.read("\(outFleet)/payouts-2026-10.csv")
        #expect(fleetCSV == (try Self.read("\(outOne)/payouts-2026-10.csv")))
        #expect(
            try Self.dataLines("\(outFleet)/payouts-2026-10.csv") == [
                "aff1,USD,0,3000,3000,3000,0,6", "aff2,USD,0,1000,1000,1000,0,2",
            ])
        let withoutTime = { (path: String) throws -> String in
            try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: ",\"generatedAt\"")[0]
        }
        #expect(
            try withoutTime("\(outFleet)/payouts-2026-10.manifest.json")
                == (try withoutTime("\(outOne)/payouts-2026-10.manifest.json")))
        // Rewritten from any one central journal or from all: the same bytes.
        let manifest = try Self.read("\(outFleet)/payouts-2026-10.manifest.json")
        #expect(
            try Self.cli(payouts + ["--out", outFleet] + centrals.reversed().flatMap { ["--db", $0.databasePath] })
                .status == 0)
        #expect(try Self.read("\(outFleet)/payouts-2026-10.manifest.json") == manifest)
        #expect(try Self.read("\(outFleet)/payouts-2026-10.csv") == fleetCSV)
        // Reconciled over the central journals read as one: what the one daemon's journal gives (aff1 6, aff2 2).
        let network = directory.file("network.csv")
        try "conversion_date,status,campaign_token,affiliate_token,count\n2026-10-30,approved,,aff1,6\n".write(
            toFile: network, atomically: true, encoding: .utf8)
        let reconcile = ["reconcile", "--rules", rules, "--network", network, "--month", "2026-10", "--format", "csv"]
        let fleetReconciled = try Self.cli(reconcile + fleet)
        #expect(fleetReconciled.status == 1)
        #expect(
            fleetReconciled.output
                == "affiliate_token,campaign_token,status,ours,theirs,class\naff1,,approved,6,6,matched\n"
                + "aff2,,approved,2,0,only_ours\n")
        #expect(try Self.cli(reconcile + one).output == fleetReconciled.output)
        DaemonProcess.terminateCleanly(centrals + [edge, single])
    }
}
