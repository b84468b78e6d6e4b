import Foundation
import OfferTrackDomain
import TestSupport
import Testing

/// Closing a month through the real daemon and CLI: money is never published from a rules file nobody gave (SPEC 6),
/// and `offertrack reconcile` puts the month beside the network's report (SPEC 13), with hand-computed answers.
@Suite(.serialized) struct MonthCloseTests {
    /// H = 48 h; every conversion earns 500, none of aff-held's is paid while the rule holds it.
    static let rules =
        #"{"currency":"USD","holdingPeriodHours":48,"rules":[{"affiliateToken":"*","amountMinor":500},"#
        + #"{"affiliateToken":"aff-held","amountMinor":300,"hold":true}]}"#

    static func review(_ user: String, _ decision: String, reason: String) -> String {
        #"{"type":"review","id":"r-\#(user)","ts":"2026-11-05T00:00:00Z","user":"\#(user)","conversion":"o-\#(user)","decision":"\#(decision)","reason":"\#(reason)"}"#
    }

    /// October 2026 seen on 2026-11-15: aff1/spring one qualified (u1) and one lapsed (u2); aff1 without a campaign
    /// one qualified (u3, pending until 2026-11-02); aff2/"fall,promo" one voided (u4) and one held (u5); aff-held one
    /// held by its rule (u9); no affiliate (u6), November (u7) and September (u8) not counted.
    static let records =
        TestRecords.conversion("u1", affiliate: "aff1", campaign: "spring", at: "2026-10-05T10:00:00Z")
        + TestRecords.conversion("u2", affiliate: "aff1", campaign: "spring", at: "2026-10-06T10:00:00Z")
        + [
            #"{"type":"capabilities","id":"lapse-u2","ts":"2026-10-07T10:00:00Z","user":"u2","authorization":"authorized","capabilities":2}"#
        ]
        + TestRecords.conversion("u3", affiliate: "aff1", campaign: nil, at: "2026-10-31T23:00:00Z")
        + TestRecords.conversion("u4", affiliate: "aff2", campaign: "fall,promo", at: "2026-10-10T10:00:00Z")
        + TestRecords.conversion("u5", affiliate: "aff2", campaign: "fall,promo", at: "2026-10-11T10:00:00Z")
        + TestRecords.conversion("u6", affiliate: nil, campaign: "spring", at: "2026-10-12T10:00:00Z")
        + TestRecords.conversion("u7", affiliate: "aff1", campaign: "spring", at: "2026-11-01T00:00:00Z")
        + TestRecords.conversion("u8", affiliate: "aff1", campaign: "spring", at: "2026-09-30T23:59:59Z")
        + TestRecords.conversion("u9", affiliate: "aff-held", campaign: nil, at: "2026-10-13T10:00:00Z")
        + [review("u4", "void", reason: "network_rejected"), review("u5", "hold", reason: "policy")]

    static func cli(_ arguments: [String]) throws -> Shell.Outcome {
        try Shell.run(Binaries.cli, arguments, environment: ["PATH": "/usr/bin:/bin"])
    }

    /// A daemon holding `records`, and the test's rules file.
    static func journal(_ directory: ScratchDirectory) throws -> (DaemonProcess, rules: String)? {
        let rules = directory.file("rules.json")
        try Self.rules.write(toFile: rules, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules])
        guard daemon.waitReady() else { return nil }
        #expect(try LineClient(path: daemon.socketPath).exchange(records).allSatisfy { $0.status == "accepted" })
        return (daemon, rules)
    }

    static func files(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    @Test func exportAndPayoutsPublishNothingWithoutRulesButRewriteWhatIsPublished() throws {
        let directory = ScratchDirectory()
        guard let (daemon, rules) = try Self.journal(directory) else { return }
        let out = directory.file("out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let db = ["--db", daemon.databasePath]
        // Before any other refusal: a day not ended, a missing --out, a month whose days are not published.
        for arguments in [
            ["export", "--date", "2026-10-31", "--out", out], ["export", "--date", "2030-01-01", "--out", out],
            ["export", "--date", "2026-10-31", "--out", directory.file("missing")],
            ["payouts", "--month", "2026-10", "--out", out],
            ["reconcile", "--month", "2026-10", "--network", directory.file("missing.csv")],
        ] {
            let refused = try Self.cli(arguments + db)
            #expect(refused.status == 64 && refused.output.contains("--rules"), "\(arguments): \(refused.output)")
        }
        #expect(try Self.files(out).isEmpty)
        let status = try Self.cli(["status", "--format", "json"] + db).output
        #expect(status.contains(#""lastPublishedExport":null"#), "\(status)")
        // Published with the rules, then rewritten without them byte for byte.
        for day in ["2026-10-30", "2026-10-31"] {
            #expect(try Self.cli(["export", "--rules", rules, "--date", day, "--out", out] + db).status == 0)
        }
        #expect(try Self.cli(["payouts", "--rules", rules, "--month", "2026-10", "--out", out] + db).status == 0)
        var published: [String: Data] = [:]
        for name in try Self.files(out) {
            published[name] = try Data(contentsOf: URL(fileURLWithPath: "\(out)/\(name)"))
            try FileManager.default.removeItem(atPath: "\(out)/\(name)")
        }
        #expect(published.count == 6)
        #expect(try Self.cli(["export", "--date", "2026-10-31", "--out", out] + db).status == 0)
        #expect(try Self.cli(["payouts", "--month", "2026-10", "--out", out] + db).status == 0)
        for name in try Self.files(out) {
            #expect(try Data(contentsOf: URL(fileURLWithPath: "\(out)/\(name)")) == published[name], "\(name)")
        }
        #expect(try Self.files(out).count == 4)
        // The next day is not published: refused without rules, and nothing written.
        let next = try Self.cli(["export", "--date", "2026-11-01", "--out", out] + db)
        #expect(next.status == 64 && next.output.contains("2026-11-01"), "\(next.output)")
        #expect(try Self.files(out).count == 4)
        daemon.signal(SIGTERM)
        #expect(daemon.waitExit() == 0)
    }

    static let networkFile = """
        conversion_date,status,campaign_token,affiliate_token,count
        2026-10-05,approved,spring,aff1,1
        2026-10-06,Rejected,spring,aff1,1
        2026-10-31T23:00:00Z,approved,,aff1,1
        2026-10-10,rejected,"fall,promo",aff2,1
        2026-10-11,approved,"fall,promo",aff2,1
        2026-11-01,approved,spring,aff1,1
        2026-10-20,approved,other,aff3,2
        2026-10-13,pending,,aff-held,1

        """

    @Test func reconcileNamesEveryDifferenceAndReadsOnly() throws {
        let directory = ScratchDirectory()
        guard let (daemon, rules) = try Self.journal(directory) else { return }
        let network = directory.file("network.csv")
        try Self.networkFile.write(toFile: network, atomically: true, encoding: .utf8)
        let common = ["reconcile", "--rules", rules, "--month", "2026-10", "--db", daemon.databasePath]
        let seqBefore = try Self.cli(["status", "--format", "json", "--db", daemon.databasePath]).output
        let json = try Self.cli(common + ["--network", network, "--as-of", "2026-11-15", "--format", "json"])
        #expect(json.status == 1, "\(json.output)")
        #expect(
            json.output == """
                [
                {"affiliateToken":"aff-held","campaignToken":null,"status":"pending","ours":1,"theirs":1,"class":"matched"},
                {"affiliateToken":"aff1","campaignToken":null,"status":"approved","ours":1,"theirs":1,"class":"matched"},
                {"affiliateToken":"aff1","campaignToken":"spring","status":"approved","ours":1,"theirs":1,"class":"matched"},
                {"affiliateToken":"aff1","campaignToken":"spring","status":"rejected","ours":1,"theirs":1,"class":"matched"},
                {"affiliateToken":"aff2","campaignToken":"fall,promo","status":"approved","ours":0,"theirs":1,"class":"only_theirs"},
                {"affiliateToken":"aff2","campaignToken":"fall,promo","status":"pending","ours":1,"theirs":0,"class":"only_ours"},
                {"affiliateToken":"aff2","campaignToken":"fall,promo","status":"rejected","ours":1,"theirs":1,"class":"matched"},
                {"affiliateToken":"aff3","campaignToken":"other","status":"approved","ours":0,"theirs":2,"class":"only_theirs"}
                ]

                """)
        // Seen on 2026-11-01, u3 (converted 2026-10-31T23:00Z, H = 48 h) is still pending.
        let early = try Self.cli(common + ["--network", network, "--as-of", "2026-11-01", "--format", "csv"])
        #expect(early.status == 1)
        #expect(
            early.output.split(separator: "\n").filter { $0.hasPrefix("aff1,,") } == [
                "aff1,,approved,0,1,only_theirs", "aff1,,pending,1,0,only_ours",
            ], "\(early.output)")
        #expect(early.output.hasPrefix("affiliate_token,campaign_token,status,ours,theirs,class\n"))
        // Per campaign token alone, as the network's aggregate report gives it; every group matched: exit 0.
        let campaigns = directory.file("campaigns.csv")
        try """
        Campaign_Token,Status,Conversion_Date,Count\r
        ,approved,2026-10-31,1\r
        ,pending,2026-10-13,1\r
        "fall,promo",pending,2026-10-11,1\r
        "fall,promo",rejected,2026-10-10,1\r
        spring,approved,2026-10-05,1\r
        spring,rejected,2026-10-06,1\r
        spring,approved,2026-09-30,9\r

        """.write(toFile: campaigns, atomically: true, encoding: .utf8)
        let matched = try Self.cli(common + ["--network", campaigns, "--as-of", "2026-11-15"])
        #expect(matched.status == 0, "\(matched.output)")
        #expect(
            matched.output.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") } == [
                "CAMPAIGN STATUS OURS THEIRS CLASS", "(none) approved 1 1 matched", "(none) pending 1 1 matched",
                "fall,promo pending 1 1 matched", "fall,promo rejected 1 1 matched", "spring approved 1 1 matched",
                "spring rejected 1 1 matched", "TOTAL approved 2 2 matched", "TOTAL pending 2 2 matched",
                "TOTAL rejected 2 2 matched",
            ], "\(matched.output)")
        // Columns the network names otherwise.
        let renamed = directory.file("renamed.csv")
        try "conversion_time,conversion_status,publisher_reference\n2026-10-05T10:00:00Z,approved,spring\n".write(
            toFile: renamed, atomically: true, encoding: .utf8)
        let mapped = try Self.cli(
            common + [
                "--network", renamed, "--as-of", "2026-11-15", "--format", "json", "--columns",
                "conversion_date=conversion_time,status=conversion_status", "--columns",
                "campaign_token=publisher_reference",
            ])
        #expect(
            mapped.status == 1
                && mapped.output.contains(
                    #""campaignToken":"spring","status":"approved","ours":1,"theirs":1,"class":"matched""#),
            "\(mapped.output)")
        // A bad file names its line; a missing one is 66; nothing was journaled.
        let bad = directory.file("bad.csv")
        try "conversion_date,status,campaign_token\n2026-10-05,approved,a\n2026-10-05,paid,a\n".write(
            toFile: bad, atomically: true, encoding: .utf8)
        let refused = try Self.cli(common + ["--network", bad])
        #expect(refused.status == 65 && refused.output.contains("line 3"), "\(refused.output)")
        #expect(try Self.cli(common + ["--network", directory.file("absent.csv")]).status == 66)
        // The void that made u4's conversion rejected carries the reason the network gave.
        let explained = try Self.cli(
            ["explain", "--user", "u4", "--format", "json", "--rules", rules, "--db", daemon.databasePath])
        #expect(explained.output.contains(#""decision":"void","reason":"network_rejected""#), "\(explained.output)")
        let seqAfter = try Self.cli(["status", "--format", "json", "--db", daemon.databasePath]).output
        #expect(Self.lastSeq(seqBefore) == Self.lastSeq(seqAfter) && Self.lastSeq(seqAfter) != nil)
        daemon.signal(SIGTERM)
        #expect(daemon.waitExit() == 0)
    }

    static func lastSeq(_ status: String) -> Substring? {
        guard let range = status.range(of: #""lastSeq":"#) else { return nil }
        return status[range.upperBound...].prefix { $0.isNumber }
    }
}
