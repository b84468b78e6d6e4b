import Foundation
import OfferTrackDomain
import OutputFormats
import Testing

/// `offertrack reconcile` (SPEC section 13): the state mapping, the classes, the grouping and order, and the network
/// file's reader, cases computed by hand from the SPEC.
@Suite struct ReconciliationTests {
    static let day = Timestamp.parseDay("2026-11-01") ?? 0
    static let hour: Int64 = 3_600_000

    /// A conversion at `at` hours into November whose presentation has `affiliate` and `campaign`, qualifying 10 h
    /// later unless `lapsed`; `review` and a rule's `hold` as rule 4.7 reads them.
    static func conversion(
        _ id: String, affiliate: String?, campaign: String?, at: Int64 = 20, attributed: Bool = true,
        lapsed: Bool = false, review: ReviewDecision? = nil, heldByRule: Bool = false
    ) -> EvaluatedConversion {
        let offer = Offer(affiliateToken: affiliate, campaignToken: campaign, messageIdentifier: nil, itemID: nil)
        let presentation = PresentationFact(id: "p-\(id)", ts: day, offer: offer, eligible: true)
        let reference = RecordReference(id: "r-\(id)", ts: day + (at + 1) * hour)
        return EvaluatedConversion(
            conversion: Conversion(
                id: id, ts: day + at * hour, status: attributed ? .attributed : .unattributed(.notEligible),
                presentation: presentation, lapse: lapsed ? reference : nil,
                review: review.map { ConversionReview(record: reference, decision: $0, reason: .fraud) }),
            commission: Commission(amountMinor: 500, reason: nil, heldByRule: heldByRule),
            qualifiesAt: attributed ? day + (at + 10) * hour : nil)
    }

    @Test(
        arguments: [
            // (what, the conversion, seen at hours into November, the network's status or nil when not counted)
            ("qualified", conversion("c", affiliate: "a", campaign: nil), 30, NetworkStatus.approved),
            ("pending", conversion("c", affiliate: "a", campaign: nil), 29, .pending),
            ("held by its review", conversion("c", affiliate: "a", campaign: nil, review: .hold), 99, .pending),
            ("held by its rule", conversion("c", affiliate: "a", campaign: nil, heldByRule: true), 99, .pending),
            (
                "released", conversion("c", affiliate: "a", campaign: nil, review: .release, heldByRule: true), 99,
                .approved
            ),
            ("lapsed", conversion("c", affiliate: "a", campaign: nil, lapsed: true), 99, .rejected),
            (
                "lapsed and voided", conversion("c", affiliate: "a", campaign: nil, lapsed: true, review: .void), 99,
                .rejected
            ),
            ("voided", conversion("c", affiliate: "a", campaign: nil, review: .void), 99, .rejected),
            ("voided while pending", conversion("c", affiliate: "a", campaign: nil, review: .void), 21, .rejected),
            ("without an affiliate token", conversion("c", affiliate: nil, campaign: "x"), 99, nil),
            ("unattributed", conversion("c", affiliate: "a", campaign: nil, attributed: false), 99, nil),
        ] as [(String, EvaluatedConversion, Int64, NetworkStatus?)])
    func oursCountsTheStateAsTheNetworkNamesIt(
        what: String, conversion: EvaluatedConversion, seenAt: Int64, expected: NetworkStatus?
    ) throws {
        var reconciliation = Reconciliation(perAffiliate: true)
        try reconciliation.addOurs(conversion, asOf: Self.day + seenAt * Self.hour)
        let counted = reconciliation.rows.map { "\($0.status):\($0.ours):\($0.theirs)" }
        #expect(counted == (expected.map { ["\($0):1:0"] } ?? []), "\(what)")
    }

    @Test func theStateMappingCoversEveryState() {
        let mapped = QualificationState.allCases.map { "\($0.rawValue)=\(NetworkStatus($0).rawValue)" }
        #expect(
            mapped == ["qualified=approved", "pending=pending", "lapsed=rejected", "voided=rejected", "held=pending"])
    }

    @Test(
        arguments: [
            (3, 3, ReconciliationClass.matched), (3, 2, .differs), (2, 3, .differs), (1, 0, .onlyOurs),
            (0, 5, .onlyTheirs),
        ] as [(Int64, Int64, ReconciliationClass)])
    func classes(ours: Int64, theirs: Int64, expected: ReconciliationClass) {
        #expect(ReconciliationClass(ours: ours, theirs: theirs) == expected)
    }

    /// Ours: two approved of (b, spring), one pending of (a, none), one rejected of (b, none). Theirs: (b, spring)
    /// approved 2, (b, spring) rejected 1, (a, none) pending 0 (adds nothing), (a, "x") approved 4.
    @Test func rowsArePerGroupAndStatusInTheSPECsOrder() throws {
        var reconciliation = Reconciliation(perAffiliate: true)
        let asOf = Self.day + 99 * Self.hour
        for conversion in [
            Self.conversion("1", affiliate: "b", campaign: "spring"),
            Self.conversion("2", affiliate: "b", campaign: "spring"),
            Self.conversion("3", affiliate: "a", campaign: nil, review: .hold),
            Self.conversion("4", affiliate: "b", campaign: nil, lapsed: true),
        ] { try reconciliation.addOurs(conversion, asOf: asOf) }
        let group = { (affiliate: String, campaign: String) in
            ReconciliationGroup(affiliateToken: affiliate, campaignToken: campaign)
        }
        try reconciliation.addTheirs(group("b", "spring"), status: .approved, count: 2)
        try reconciliation.addTheirs(group("b", "spring"), status: .rejected, count: 1)
        try reconciliation.addTheirs(group("a", ""), status: .pending, count: 0)
        try reconciliation.addTheirs(group("a", "x"), status: .approved, count: 4)
        let rows = reconciliation.rows.map {
            "\($0.group.affiliateToken ?? "-")|\($0.group.campaignToken)|\($0.status)|\($0.ours)|\($0.theirs)|"
                + $0.rowClass.rawValue
        }
        #expect(
            rows == [
                "a||pending|1|0|only_ours", "a|x|approved|0|4|only_theirs", "b||rejected|1|0|only_ours",
                "b|spring|approved|2|2|matched", "b|spring|rejected|0|1|only_theirs",
            ])
        let totals = try Reconciliation.totals(reconciliation.rows).map { "\($0.status)|\($0.ours)|\($0.theirs)" }
        #expect(totals == ["approved|2|6", "pending|1|0", "rejected|1|1"])
    }

    /// Per campaign token alone, every affiliate's conversions of a campaign are one group.
    @Test func withoutTheAffiliateColumnGroupsAreCampaignsAlone() throws {
        var reconciliation = Reconciliation(perAffiliate: false)
        let asOf = Self.day + 99 * Self.hour
        try reconciliation.addOurs(Self.conversion("1", affiliate: "a", campaign: "s"), asOf: asOf)
        try reconciliation.addOurs(Self.conversion("2", affiliate: "b", campaign: "s"), asOf: asOf)
        #expect(
            reconciliation.rows.map { "\($0.group.affiliateToken ?? "-")|\($0.group.campaignToken)|\($0.ours)" }
                == ["-|s|2"])
    }

    // MARK: - The network's file

    static let november = PayoutMonth("2026-11")

    static func read(_ text: String, names: [NetworkReportFile.Column: String] = [:]) throws -> [String] {
        let month = try #require(november)
        let reconciliation = try NetworkReportFile.read(Array(text.utf8), month: month, headerNames: names)
        return reconciliation.rows.map {
            "\($0.group.affiliateToken ?? "-")|\($0.group.campaignToken)|\($0.status)|\($0.theirs)"
        }
    }

    static func refusal(_ text: String) throws -> String {
        let month = try #require(november)
        do {
            _ = try NetworkReportFile.read(Array(text.utf8), month: month)
            return "read"
        } catch {
            return "line \(error.line)"
        }
    }

    @Test func aFileOfOneRowPerConversion() throws {
        let file =
            "\u{FEFF}Status,Conversion_Date,other,CAMPAIGN_TOKEN\r\n"
            + "approved,2026-11-01,\"x,y\",spring26\r\n" + "APPROVED,2026-11-30T23:59:59.999Z,,spring26\r\n"
            + "Rejected,2026-12-01T00:30:00+01:00,,\"a,b\"\r\n" + "pending,2026-10-31,,spring26\r\n"
            + "pending,2026-12-01,,spring26"
        // 2026-12-01T00:30:00+01:00 is 2026-11-30 in UTC; 2026-10-31 and 2026-12-01 are other months.
        #expect(try Self.read(file) == ["-|a,b|rejected|1", "-|spring26|approved|2"])
    }

    @Test func aFileOfCountsPerAffiliate() throws {
        let file = """
            affiliate_token,campaign_token,status,count,conversion_date
            1010lKxy,,approved,12,2026-11-03
            1010lKxy,,approved,3,2026-11-04
            1010lKxy,,rejected,0,2026-11-04
            aff-42,"say \"\"hi\"\"",pending,000000000000000007,2026-11-05

            """
        #expect(try Self.read(file) == ["1010lKxy||approved|15", "aff-42|say \"hi\"|pending|7"])
    }

    @Test func columnsNamedOtherwise() throws {
        let file = "conversion_time,conversion_status,publisher_reference\n2026-11-02T10:00:00Z,approved,x\n"
        let names: [NetworkReportFile.Column: String] = [
            .conversionDate: "Conversion_Time", .status: "conversion_status", .campaignToken: "publisher_reference",
        ]
        #expect(try Self.read(file, names: names) == ["-|x|approved|1"])
    }

    /// The network fuzzer's seeds (fuzz/corpus/network) replayed through its invariants on every `swift test`: read
    /// or refused the same way twice, a refusal naming a line the file has.
    @Test func theFuzzersSeedsKeepTheReadersInvariants() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../fuzz/corpus/network").standardized.path
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(names.count >= 6)
        let month = try #require(Self.november)
        for name in names {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(name)")))
            let lines = bytes.count { $0 == UInt8(ascii: "\n") } + 1
            let first = Result { () throws(NetworkReportFile.Malformed) in
                try NetworkReportFile.read(bytes, month: month)
            }
            let second = Result { () throws(NetworkReportFile.Malformed) in
                try NetworkReportFile.read(bytes, month: month)
            }
            switch (first, second) {
            case (.success(let one), .success(let two)): #expect(one.rows == two.rows, "\(name)")
            case (.failure(let one), .failure(let two)):
                #expect(one == two && (1...lines).contains(one.line), "\(name): \(one)")
            default: Issue.record("\(name): read once and refused once")
            }
        }
    }

    @Test(arguments: [
        ("", "line 1"),
        ("status,campaign_token\n", "line 1"),
        ("conversion_date,status,campaign_token,Status\n", "line 1"),
        ("conversion_date,status,campaign_token\n2026-11-02,approved\n", "line 2"),
        ("conversion_date,status,campaign_token\n2026-11-02,approved,a,b\n", "line 2"),
        ("conversion_date,status,campaign_token\n2026-11-02,approved,a\n2026-11-31,approved,a\n", "line 3"),
        ("conversion_date,status,campaign_token\n2026-11-02 10:00:00,approved,a\n", "line 2"),
        ("conversion_date,status,campaign_token\n2026-11-02,paid,a\n", "line 2"),
        // Other months' rows are checked too.
        ("conversion_date,status,campaign_token\n2025-01-02,paid,a\n", "line 2"),
        ("conversion_date,status,campaign_token,count\n2026-11-02,approved,a,\n", "line 2"),
        ("conversion_date,status,campaign_token,count\n2026-11-02,approved,a,-1\n", "line 2"),
        ("conversion_date,status,campaign_token,count\n2026-11-02,approved,a,1234567890123456789\n", "line 2"),
        ("conversion_date,status,campaign_token,affiliate_token\n2026-11-02,approved,a,\n", "line 2"),
        // A quoted field over two physical lines: the next row starts on line 4.
        ("conversion_date,status,campaign_token\n2026-11-02,approved,\"a\nb\"\n2026-11-02,approved,\"open\n", "line 4"),
        ("conversion_date,status,campaign_token\n2026-11-02,approved,a\"b\n", "line 2"),
        ("conversion_date,status,campaign_token\n2026-11-02,approved,\"a\"b\n", "line 2"),
        ("conversion_date,status,campaign_token\n2026-11-02,approved,a\n", "read"),
    ])
    func aBadFileNamesTheLineWhereTheBadRowStarts(file: String, expected: String) throws {
        #expect(try Self.refusal(file) == expected, "\(file)")
    }
}
