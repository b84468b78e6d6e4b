import OfferTrackDomain
import OutputFormats
import Testing

/// `offertrack explain` (SPEC section 6): the JSON object field by field, computed by hand.
@Suite struct ExplanationTests {
    typealias A = AttributionRecords
    static let hour = A.hour
    static let t0 = A.t0

    /// H = 1080 h; rules[0] pays 500 to any affiliate, rules[1] 700 to `1010lKxy`, rules[2] 900 to `other` only
    /// from 2026-12-01.
    static let rules = CommissionRules(
        currency: "USD",
        settings: AttributionSettings(windowMs: A.window, freshnessMs: A.freshness, holdingMs: 1080 * hour),
        rules: [
            CommissionRule(affiliateToken: "*", campaignToken: nil, amountMinor: 500, from: nil, until: nil),
            CommissionRule(affiliateToken: "1010lKxy", campaignToken: nil, amountMinor: 700, from: nil, until: nil),
            CommissionRule(
                affiliateToken: "other", campaignToken: "c", amountMinor: 900, from: t0 + 720 * hour, until: nil),
        ])

    static func json(_ records: [Record], asOf: Int64 = t0 + 200 * hour, rules: CommissionRules = rules) -> String {
        ExplanationFormat.json(Explanation(user: "u1", userRecords: records, rules: rules, asOf: asOf))
    }

    static func ref(_ id: String, _ at: String) -> String { "{\"id\":\"\(id)\",\"ts\":\"2026-11-\(at)Z\"}" }

    static func expected(
        records: Int, conversion: String = "null", presentation: String = "null", eligibility: String = "null",
        lapse: String = "null", review: String = "null", repeats: String = "[]", status: String,
        reason: String = "null", amount: Int = 0,
        rule: String = "null", qualifiesAt: String = "null", state: String = "null", erasure: String = "null"
    ) -> String {
        "{\"user\":\"u1\",\"records\":\(records),\"conversion\":\(conversion),\"presentation\":\(presentation),"
            + "\"eligibility\":\(eligibility),\"lapse\":\(lapse),\"review\":\(review),\"repeats\":\(repeats),"
            + "\"status\":\"\(status)\","
            + "\"reason\":\(reason),\"amountMinor\":\(amount),\"rule\":\(rule),\"qualifiesAt\":\(qualifiesAt),"
            + "\"state\":\(state),\"erasure\":\(erasure)}\n"
    }

    static let check = A.check("c", 0)
    static let eligibility = "{\"id\":\"c\",\"ts\":\"2026-11-01T00:00:00.000Z\",\"decision\":\"eligible\"}"
    static let shown = A.presented("p", hour)
    static let converted = A.outcome("o", 2 * hour, offerId: "p")

    @Test func attributedAndPending() {
        #expect(
            Self.json([Self.converted, Self.shown, Self.check])
                == Self.expected(
                    records: 3, conversion: Self.ref("o", "01T02:00:00.000"),
                    presentation: Self.ref("p", "01T01:00:00.000"),
                    eligibility: Self.eligibility, status: "attributed", amount: 700, rule: "1",
                    qualifiesAt: "\"2026-12-16T02:00:00.000Z\"", state: "\"pending\""))
    }

    @Test func qualifiedAtTPlusHExactly() {
        let asOf = Self.t0 + 2 * Self.hour + 1080 * Self.hour
        #expect(
            Self.json([Self.check, Self.shown, Self.converted], asOf: asOf).hasSuffix(
                "\"state\":\"qualified\",\"erasure\":null}\n"))
        #expect(
            Self.json([Self.check, Self.shown, Self.converted], asOf: asOf - 1).hasSuffix(
                "\"state\":\"pending\",\"erasure\":null}\n"))
    }

    @Test func lapsed() {
        let lapse = A.check("l", 800 * Self.hour, .ineligible)
        #expect(
            Self.json([Self.check, Self.shown, Self.converted, lapse, A.check("l2", 900 * Self.hour, .eligible)])
                == Self.expected(
                    records: 5, conversion: Self.ref("o", "01T02:00:00.000"),
                    presentation: Self.ref("p", "01T01:00:00.000"),
                    eligibility: Self.eligibility, lapse: "{\"id\":\"l\",\"ts\":\"2026-12-04T08:00:00.000Z\"}",
                    status: "attributed", amount: 700, rule: "1", qualifiesAt: "\"2026-12-16T02:00:00.000Z\"",
                    state: "\"lapsed\""))
    }

    @Test func noRuleAndNoAffiliate() {
        // `other` with campaign c converts before rules[2] starts: rules[0] matches any token, so use rules
        // without the wildcard to see no_rule.
        let noWildcard = CommissionRules(
            currency: "USD", settings: Self.rules.settings, rules: Array(Self.rules.rules.dropFirst()))
        let other = A.presented("p", Self.hour, affiliate: "other", campaign: "c")
        #expect(
            Self.json([Self.check, other, Self.converted], rules: noWildcard)
                == Self.expected(
                    records: 3, conversion: Self.ref("o", "01T02:00:00.000"),
                    presentation: Self.ref("p", "01T01:00:00.000"),
                    eligibility: Self.eligibility, status: "attributed", reason: "\"no_rule\"",
                    qualifiesAt: "\"2026-12-16T02:00:00.000Z\"", state: "\"pending\""))
        let anonymous = A.presented("p", Self.hour, affiliate: nil)
        #expect(
            Self.json([Self.check, anonymous, Self.converted])
                == Self.expected(
                    records: 3, conversion: Self.ref("o", "01T02:00:00.000"),
                    presentation: Self.ref("p", "01T01:00:00.000"),
                    eligibility: Self.eligibility, status: "attributed", reason: "\"no_affiliate\"",
                    qualifiesAt: "\"2026-12-16T02:00:00.000Z\"", state: "\"pending\""))
    }

    @Test func staleEligibilityIsStillNamed() {
        let stale = A.check("c", 0, .eligible)
        let late = A.presented("p", 25 * Self.hour)
        let conversion = A.outcome("o", 26 * Self.hour)
        #expect(
            Self.json([stale, late, conversion])
                == Self.expected(
                    records: 3, conversion: Self.ref("o", "02T02:00:00.000"),
                    presentation: Self.ref("p", "02T01:00:00.000"),
                    eligibility: Self.eligibility, status: "unattributed", reason: "\"eligibility_unknown\""))
    }

    @Test func noPresentationAndRepeats() {
        let records = [
            A.outcome("o", Self.hour), A.outcome("r2", 3 * Self.hour), A.outcome("d", 2 * Self.hour, subscribed: false),
            A.outcome("r1", 2 * Self.hour), Self.check,
        ]
        #expect(
            Self.json(records)
                == Self.expected(
                    records: 5, conversion: Self.ref("o", "01T01:00:00.000"), repeats: "[\"r1\",\"r2\"]",
                    status: "unattributed", reason: "\"no_presentation\""))
    }

    @Test func noConversion() {
        #expect(
            Self.json([Self.check, Self.shown]) == Self.expected(records: 2, status: "none"))
    }

    @Test func textNamesEveryRuleAndRecord() {
        let text = ExplanationFormat.text(
            Explanation(
                user: "u1", userRecords: [Self.check, Self.shown, Self.converted], rules: Self.rules,
                asOf: Self.t0 + 200 * Self.hour))
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 8)
        #expect(lines[1].hasPrefix("4.1 conversion: o at 2026-11-01T02:00:00.000Z"))
        #expect(lines[2].contains("p at 2026-11-01T01:00:00.000Z, named by the conversion's offerId"))
        #expect(lines[3] == "4.3 window: the conversion came 1 h after it; the window is 30 d: inside")
        #expect(lines[4].hasPrefix("4.4 eligibility: c at 2026-11-01T00:00:00.000Z decided eligible, 1 h before"))
        #expect(lines[5] == "4.5 commission: rules[1] sets 7.00 USD")
        #expect(lines[6].contains("pending: qualifies at 2026-12-16T02:00:00.000Z"))
        #expect(lines[7] == "verdict: attributed, pending: 7.00 USD once it qualifies")
    }
}
