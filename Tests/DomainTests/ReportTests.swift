import OfferTrackDomain
import OutputFormats
import Testing

/// SPEC section 6 `report`: grouping, ordering, range filtering and the three formats.
@Suite struct ReportTests {
    static let day: Int64 = 1_793_491_200_000  // 2026-11-01T00:00:00Z
    static let hour: Int64 = 3_600_000

    static func fact(
        _ id: String,
        _ at: Int64,
        affiliate: String?,
        campaign: String?,
        message: String?,
        eligible: Bool
    ) -> PresentationFact {
        let offer = Offer(affiliateToken: affiliate, campaignToken: campaign, messageIdentifier: message, itemID: nil)
        return PresentationFact(id: id, ts: day + at, offer: offer, eligible: eligible)
    }

    static func converted(
        _ id: String,
        _ at: Int64,
        _ status: ConversionStatus,
        _ presentation: PresentationFact?,
        amount: Int64 = 0,
        reason: CommissionReason? = nil,
        holding: Int64 = 0,
        lapse: RecordReference? = nil
    ) -> EvaluatedConversion {
        EvaluatedConversion(
            conversion: Conversion(id: id, ts: day + at, status: status, presentation: presentation, lapse: lapse),
            commission: Commission(amountMinor: amount, reason: reason),
            qualifiesAt: status.isAttributed ? day + at + holding : nil
        )
    }

    static let p1 = fact("p1", 1 * hour, affiliate: "Z", campaign: "spring,26", message: nil, eligible: true)
    static let p2 = fact("p2", 2 * hour, affiliate: "a", campaign: nil, message: "playMusic", eligible: false)
    static let p3 = fact("p3", 3 * hour, affiliate: nil, campaign: "say \"hi\"", message: "connect", eligible: true)
    static let p4 = fact("p4", 25 * hour, affiliate: "é", campaign: nil, message: nil, eligible: true)
    static let presentations = [p4, p3, p2, p1]
    static let conversions = [
        converted("c1", 3 * hour / 2, .attributed, p1, amount: 700),
        converted("c2", 26 * hour, .attributed, p4, reason: .noRule),
        converted("c3", 4 * hour, .unattributed(.notEligible), p2, reason: .notEligible),
        converted("c4", 5 * hour, .attributed, p3, reason: .noAffiliate),
    ]

    /// The fixture's report (empty on an overflow, which these small amounts cannot reach: the tests would fail).
    static func report(_ grouping: ReportGrouping, _ range: ReportRange = .all) -> [ReportRow] {
        (try? ReportAccumulator.build(
            presentations: presentations, conversions: conversions, grouping: grouping, range: range)) ?? []
    }

    static func row(_ key: String?, _ p: Int, _ e: Int, _ c: Int, _ a: Int, _ m: Int64) -> ReportRow {
        ReportRow(key: key, presented: p, presentedEligible: e, conversions: c, attributed: a, commissionMinor: m)
    }

    // MARK: Grouping

    @Test func byAffiliateSortsByBytesWithNullLast() {
        #expect(
            Self.report(.affiliate) == [
                Self.row("Z", 1, 1, 1, 1, 700), Self.row("a", 1, 0, 0, 0, 0), Self.row("é", 1, 1, 1, 1, 0),
                Self.row(nil, 1, 1, 2, 1, 0),
            ])
    }

    @Test func byCampaignPutsUnattributedAndAbsentInNull() {
        #expect(
            Self.report(.campaign) == [
                Self.row("say \"hi\"", 1, 1, 1, 1, 0), Self.row("spring,26", 1, 1, 1, 1, 700),
                Self.row(nil, 2, 1, 2, 1, 0),
            ])
    }

    @Test func byMessageCountsMissingAsJoin() {
        #expect(
            Self.report(.message) == [
                Self.row("connect", 1, 1, 1, 1, 0), Self.row("join", 2, 2, 2, 2, 700),
                Self.row("playMusic", 1, 0, 0, 0, 0), Self.row(nil, 0, 0, 1, 0, 0),
            ])
    }

    @Test func byDayUsesEachRecordsOwnUTCDateAndHasNoNullRow() {
        #expect(
            Self.report(.day) == [
                Self.row("2026-11-01", 3, 2, 3, 2, 700), Self.row("2026-11-02", 1, 1, 1, 1, 0),
            ])
    }

    @Test func dayBoundaryIsUTCMidnight() throws {
        let before = Self.fact("x", -1, affiliate: nil, campaign: nil, message: nil, eligible: false)
        let at = Self.fact("y", 0, affiliate: nil, campaign: nil, message: nil, eligible: false)
        let rows = try ReportAccumulator.build(presentations: [before, at], conversions: [], grouping: .day)
        #expect(rows.map(\.key) == ["2026-10-31", "2026-11-01"])
    }

    @Test func rangeIsHalfOpenOverEachRecordsOwnTs() {
        let range = ReportRange(since: Self.day + 2 * Self.hour, until: Self.day + 25 * Self.hour)
        #expect(Self.report(.affiliate, range) == [Self.row("a", 1, 0, 0, 0, 0), Self.row(nil, 1, 1, 2, 1, 0)])
        let conversionsOnly = ReportRange(since: Self.day + 26 * Self.hour)
        #expect(Self.report(.affiliate, conversionsOnly) == [Self.row("é", 0, 0, 1, 1, 0)])
        #expect(Self.report(.affiliate, ReportRange(until: Self.day)) == [])
    }

    @Test func keysCompareByBytesNotByStringOrder() throws {
        // "A" + combining ring (41 CC 8A) sorts before "Z" and "Ä" (C3 84) by bytes, though Swift's `<` says otherwise;
        // "é" precomposed and decomposed are different keys.
        var accumulator = ReportAccumulator()
        for key in ["\u{C4}", "A\u{30A}", "e\u{301}", "\u{E9}", "a", "Z", "\u{E9}"] {
            accumulator.add(presentationKey: key, eligible: true)
        }
        accumulator.add(presentationKey: nil, eligible: false)
        let rows = try accumulator.rows()
        #expect(
            rows.map { $0.key.map { Array($0.unicodeScalars) } } == [
                Array("A\u{30A}".unicodeScalars), Array("Z".unicodeScalars), Array("a".unicodeScalars),
                Array("e\u{301}".unicodeScalars), Array("\u{C4}".unicodeScalars), Array("\u{E9}".unicodeScalars), nil,
            ])
        #expect(rows.map(\.presented) == [1, 1, 1, 1, 1, 2, 1])
    }

    @Test func partialRowsMergeLikeSingleCounts() throws {
        var single = ReportAccumulator()
        single.add(presentationKey: "k", eligible: true)
        single.add(presentationKey: "k", eligible: false)
        single.add(conversionKey: "k", state: .qualified, amountMinor: 250)
        single.add(conversionKey: "k", state: nil, amountMinor: 999)
        single.add(conversionKey: nil, state: nil, amountMinor: 0)
        var merged = ReportAccumulator()
        merged.merge(Self.row("k", 2, 1, 0, 0, 0))
        merged.merge(Self.row("k", 0, 0, 2, 1, 250))
        merged.merge(Self.row(nil, 0, 0, 1, 0, 0))
        merged.merge(Self.row("empty", 0, 0, 0, 0, 0))
        #expect(try single.rows() == merged.rows())
        #expect(try merged.rows() == [Self.row("k", 2, 1, 2, 1, 250), Self.row(nil, 0, 0, 1, 0, 0)])
    }

    // MARK: Formats

    @Test func jsonFormat() throws {
        let expected = """
            [
            {"key":"say \\"hi\\"","presented":1,"presentedEligible":1,"conversions":1,"attributed":1,"lapsed":0,"voided":0,"held":0,"pending":0,"commissionMinor":0,"pendingCommissionMinor":0,"heldCommissionMinor":0},
            {"key":"spring,26","presented":1,"presentedEligible":1,"conversions":1,"attributed":1,"lapsed":0,"voided":0,"held":0,"pending":0,"commissionMinor":700,"pendingCommissionMinor":0,"heldCommissionMinor":0},
            {"key":null,"presented":2,"presentedEligible":1,"conversions":2,"attributed":1,"lapsed":0,"voided":0,"held":0,"pending":0,"commissionMinor":0,"pendingCommissionMinor":0,"heldCommissionMinor":0}
            ]

            """
        #expect(try ReportFormat.json.render(Self.report(.campaign), grouping: .campaign, currency: "USD") == expected)
        #expect(ReportFormat.json([]) == "[]\n")
    }

    @Test func csvFormat() throws {
        let expected = #"""
            key,presented,presented_eligible,conversions,attributed,lapsed,voided,held,pending,commission_minor,pending_commission_minor,held_commission_minor
            "say ""hi""",1,1,1,1,0,0,0,0,0,0,0
            "spring,26",1,1,1,1,0,0,0,0,700,0,0
            ,2,1,2,1,0,0,0,0,0,0,0

            """#
        #expect(try ReportFormat.csv.render(Self.report(.campaign), grouping: .campaign, currency: "USD") == expected)
        #expect(
            ReportFormat.csv([])
                == "key,presented,presented_eligible,conversions,attributed,lapsed,voided,held,pending,"
                + "commission_minor,pending_commission_minor,held_commission_minor\n")
    }

    @Test func tableFormat() throws {
        let expected = """
            CAMPAIGN   PRESENTED  ELIGIBLE  CONVERSIONS  ATTRIBUTED  LAPSED  VOIDED  HELD  PENDING  COMMISSION USD  PENDING USD  HELD USD
            say "hi"           1         1            1           1       0       0     0        0            0.00         0.00      0.00
            spring,26          1         1            1           1       0       0     0        0            7.00         0.00      0.00
            (none)             2         1            2           1       0       0     0        0            0.00         0.00      0.00
            TOTAL              4         3            4           3       0       0     0        0            7.00         0.00      0.00

            """
        #expect(try ReportFormat.table.render(Self.report(.campaign), grouping: .campaign, currency: "USD") == expected)
    }

    @Test func emptyTableHasATotalLine() throws {
        let expected = """
            DAY    PRESENTED  ELIGIBLE  CONVERSIONS  ATTRIBUTED  LAPSED  VOIDED  HELD  PENDING  COMMISSION JPY  PENDING JPY  HELD JPY
            TOTAL          0         0            0           0       0       0     0        0               0            0         0

            """
        #expect(try ReportFormat.table([], grouping: .day, currency: "JPY") == expected)
    }

    // MARK: Holding period (rule 4.6)

    /// H = 10 h: c1 at 1:30 qualifies at 11:30, c2 lapsed, c3 unattributed, c4 (at 5:00) qualifies at 15:00.
    static let held = [
        converted("c1", 3 * hour / 2, .attributed, p1, amount: 700, holding: 10 * hour),
        converted(
            "c2", 26 * hour, .attributed, p4, amount: 300, holding: 10 * hour,
            lapse: RecordReference(id: "l2", ts: day + 27 * hour)),
        converted("c3", 4 * hour, .unattributed(.notEligible), p2, reason: .notEligible, holding: 10 * hour),
        converted("c4", 5 * hour, .attributed, p3, amount: 200, holding: 10 * hour),
    ]

    @Test(
        arguments: [
            // as of the instant before c1 qualifies: everything attributed that did not lapse is pending
            (Int64(23 * hour / 2 - 1), [("Z", 0, 1, 0, 700), ("é", 1, 0, 0, 0), (nil, 0, 1, 0, 200)]),
            // c1's qualifying instant exactly
            (Int64(23 * hour / 2), [("Z", 0, 0, 700, 0), ("é", 1, 0, 0, 0), (nil, 0, 1, 0, 200)]),
            (Int64(15 * hour), [("Z", 0, 0, 700, 0), ("é", 1, 0, 0, 0), (nil, 0, 0, 200, 0)]),
        ] as [(Int64, [(String?, Int, Int, Int64, Int64)])])
    func lapsedPendingAndQualifiedAtAsOf(asOf: Int64, expected: [(String?, Int, Int, Int64, Int64)]) throws {
        let rows = try ReportAccumulator.build(
            presentations: [], conversions: Self.held, grouping: .affiliate, asOf: Self.day + asOf)
        #expect(rows.map(\.key) == expected.map(\.0))
        #expect(rows.map(\.lapsed) == expected.map(\.1))
        #expect(rows.map(\.pending) == expected.map(\.2))
        #expect(rows.map(\.commissionMinor) == expected.map(\.3))
        #expect(rows.map(\.pendingCommissionMinor) == expected.map(\.4))
        // Lapsed and pending count among the attributed; nothing lapsed earns.
        #expect(rows.map(\.attributed) == [1, 1, 1])
        #expect(rows.map(\.conversions) == [1, 1, 2])
    }

    @Test(arguments: [
        (Int64(8400), "USD", "84.00"), (840, "JPY", "840"), (-5, "USD", "-0.05"), (0, "EUR", "0.00"),
        (1_234_567, "KWD", "1234.567"), (12, "CLF", "0.0012"), (100, "ISK", "100"),
        (Int64.min, "USD", "-92233720368547758.08"),
    ])
    func moneyInTheCurrencysMajorUnit(minor: Int64, currency: String, expected: String) {
        #expect(Money.format(minor, currency: currency) == expected)
    }

    @Test(arguments: [
        ("plain", "plain"), ("", ""), ("a,b", "\"a,b\""), ("say \"hi\"", "\"say \"\"hi\"\"\""),
        ("line\nbreak", "\"line\nbreak\""), ("cr\r", "\"cr\r\""), ("tab\t", "tab\t"), ("été", "été"),
    ])
    func csvFieldQuoting(value: String, expected: String) {
        #expect(CSVField.escape(value) == expected)
    }

    @Test(arguments: [
        ("plain", "\"plain\""), ("q\"b\\", "\"q\\\"b\\\\\""), ("n\nr\rt\t", "\"n\\nr\\rt\\t\""),
        ("\u{0}\u{1F}\u{7F}", "\"\\u0000\\u001f\u{7F}\""), ("é😀", "\"é😀\""), ("\u{8}\u{C}", "\"\\b\\f\""),
    ])
    func jsonStringEscaping(value: String, expected: String) {
        #expect(JSONStringLiteral.quote(value) == expected)
    }
}
