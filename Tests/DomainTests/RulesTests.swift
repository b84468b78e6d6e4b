import JSON
import OfferTrackDomain
import Testing
import WireFormat

/// SPEC section 5: parsing, validation errors and rule matching.
@Suite struct RulesTests {
    // MARK: Fixtures

    static func object(_ members: KeyValuePairs<String, JSONValue>) -> JSONValue {
        .object(JSONObject(members: members.map { (key: $0.key, value: $0.value) }))
    }

    static func number(_ literal: String) -> JSONValue { .number(JSONNumber(literal: literal)) }

    static func rule(
        _ token: String,
        campaign: String? = nil,
        amount: String = "100",
        from: String? = nil,
        until: String? = nil
    ) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("affiliateToken", .string(token)), ("amountMinor", number(amount)),
        ]
        if let campaign { members.append(("campaignToken", .string(campaign))) }
        if let from { members.append(("from", .string(from))) }
        if let until { members.append(("until", .string(until))) }
        return .object(JSONObject(members: members))
    }

    static func file(_ rules: [JSONValue]) -> JSONValue {
        object(["currency": .string("USD"), "rules": .array(rules)])
    }

    static func parse(_ rules: [JSONValue]) throws -> CommissionRules {
        try CommissionRules(json: file(rules))
    }

    static func error(_ json: JSONValue) -> RulesError? {
        do {
            _ = try CommissionRules(json: json)
            return nil
        } catch {
            return error
        }
    }

    static let march1: Int64 = 1_772_323_200_000  // 2026-03-01T00:00:00Z
    static let june1: Int64 = 1_780_272_000_000  // 2026-06-01T00:00:00Z

    // MARK: Parsing

    @Test func specExampleParses() throws {
        let rules = try Self.parse([
            Self.rule("*", amount: "500"), Self.rule("1010lKxy", amount: "700"),
            Self.rule(
                "1010lKxy", campaign: "spring26", amount: "900", from: "2026-03-01T00:00:00Z",
                until: "2026-06-01T00:00:00Z"),
        ])
        #expect(rules.currency == "USD")
        #expect(rules.settings == .defaults)
        #expect(rules.rules.count == 3)
        #expect(rules.rules[2].from == Self.march1)
        #expect(rules.rules[2].until == Self.june1)
        #expect(rules.amount(affiliateToken: "1010lKxy", campaignToken: "spring26", at: Self.march1) == 900)
        #expect(rules.amount(affiliateToken: "1010lKxy", campaignToken: "spring26", at: Self.june1) == 700)
        #expect(rules.amount(affiliateToken: "other", campaignToken: "spring26", at: Self.march1) == 500)
    }

    @Test func windowsAreReadInHours() throws {
        let rules = try CommissionRules(
            json: Self.object([
                "currency": .string("EUR"), "attributionWindowHours": Self.number("48"),
                "eligibilityFreshnessHours": Self.number("1"), "rules": .array([]),
            ]))
        #expect(rules.currency == "EUR")
        #expect(rules.settings == AttributionSettings(windowMs: 48 * 3_600_000, freshnessMs: 3_600_000))
    }

    @Test(arguments: [(nil, 0), ("0", 0), ("1080", 1080), ("1", 1)] as [(String?, Int64)])
    func holdingPeriodIsReadInHoursAndMayBeZero(value: String?, hours: Int64) throws {
        let rules = try CommissionRules(
            json: value.map {
                Self.object(["currency": .string("USD"), "holdingPeriodHours": Self.number($0), "rules": .array([])])
            }
                ?? Self.object(["currency": .string("USD"), "rules": .array([])]))
        #expect(rules.settings.holdingMs == hours * 3_600_000)
        #expect(rules.settings.windowMs == AttributionSettings.defaults.windowMs)
    }

    @Test func payoutMinimumIsAnIntegerOfAtLeastZeroDefaultingToZero() throws {
        let base: KeyValuePairs<String, JSONValue> = ["currency": .string("USD"), "rules": .array([])]
        #expect(try CommissionRules(json: Self.object(base)).payoutMinimumMinor == 0)
        for (literal, value) in [("0", Int64(0)), ("2500", 2500), ("1000000000000", 1_000_000_000_000)] {
            let rules = try CommissionRules(
                json: Self.object([
                    "currency": .string("USD"), "payoutMinimumMinor": Self.number(literal), "rules": .array([]),
                ]))
            #expect(rules.payoutMinimumMinor == value)
        }
        for bad in [Self.number("-1"), Self.number("1.5"), Self.number("1e40"), .string("100"), .bool(true)] {
            let error = Self.error(
                Self.object(["currency": .string("USD"), "payoutMinimumMinor": bad, "rules": .array([])]))
            #expect(error?.path == "payoutMinimumMinor" && error?.message.contains("payoutMinimumMinor") == true)
        }
    }

    @Test func nullOptionalMembersCountAsAbsent() throws {
        let rules = try CommissionRules(
            json: Self.object([
                "currency": .string("USD"), "attributionWindowHours": .null,
                "rules": .array([
                    Self.object(["affiliateToken": .string("*"), "amountMinor": Self.number("1"), "from": .null])
                ]),
            ]))
        #expect(rules.settings == .defaults)
        #expect(rules.rules.first?.from == nil)
    }

    @Test func defaultsHaveNoRules() {
        #expect(CommissionRules.defaults.currency == "USD")
        #expect(CommissionRules.defaults.settings == .defaults)
        #expect(CommissionRules.defaults.amount(affiliateToken: "x", campaignToken: nil, at: 0) == nil)
    }

    // MARK: Matching

    @Test func mostSpecificRuleWins() throws {
        let rules = try Self.parse([
            Self.rule("*", amount: "1"), Self.rule("*", campaign: "c", amount: "2"), Self.rule("t", amount: "3"),
            Self.rule("t", campaign: "c", amount: "4"),
        ])
        #expect(rules.amount(affiliateToken: "t", campaignToken: "c", at: 0) == 4)
        #expect(rules.amount(affiliateToken: "t", campaignToken: "d", at: 0) == 3)
        #expect(rules.amount(affiliateToken: "t", campaignToken: nil, at: 0) == 3)
        #expect(rules.amount(affiliateToken: "u", campaignToken: "c", at: 0) == 2)
        #expect(rules.amount(affiliateToken: "u", campaignToken: nil, at: 0) == 1)
    }

    @Test func tokenBeatsWildcardWithCampaign() throws {
        let rules = try Self.parse([Self.rule("*", campaign: "c", amount: "2"), Self.rule("t", amount: "3")])
        #expect(rules.amount(affiliateToken: "t", campaignToken: "c", at: 0) == 3)
    }

    @Test func noMatchingRuleIsNil() throws {
        let rules = try Self.parse([Self.rule("t", campaign: "c", amount: "4")])
        #expect(rules.amount(affiliateToken: "t", campaignToken: nil, at: 0) == nil)
        #expect(rules.amount(affiliateToken: "T", campaignToken: "c", at: 0) == nil)
    }

    @Test func tokensCompareByExactScalars() throws {
        let rules = try Self.parse([Self.rule("t", campaign: "caf\u{E9}", amount: "4")])
        #expect(rules.amount(affiliateToken: "t", campaignToken: "caf\u{E9}", at: 0) == 4)
        #expect(rules.amount(affiliateToken: "t", campaignToken: "cafe\u{301}", at: 0) == nil)
    }

    @Test func latestFromWinsAmongEquallySpecific() throws {
        let rules = try Self.parse([
            Self.rule("t", amount: "1"), Self.rule("t", amount: "3", from: "2026-06-01T00:00:00Z"),
            Self.rule("t", amount: "2", from: "2026-03-01T00:00:00Z"),
        ])
        #expect(rules.amount(affiliateToken: "t", campaignToken: nil, at: Self.march1 - 1) == 1)
        #expect(rules.amount(affiliateToken: "t", campaignToken: nil, at: Self.march1) == 2)
        #expect(rules.amount(affiliateToken: "t", campaignToken: nil, at: Self.june1 - 1) == 2)
        #expect(rules.amount(affiliateToken: "t", campaignToken: nil, at: Self.june1) == 3)
    }

    @Test func fromIsInclusiveAndUntilExclusive() throws {
        let rules = try Self.parse([
            Self.rule("t", amount: "9", from: "2026-03-01T00:00:00Z", until: "2026-06-01T00:00:00Z")
        ])
        #expect(rules.amount(affiliateToken: "t", campaignToken: nil, at: Self.march1 - 1) == nil)
        #expect(rules.amount(affiliateToken: "t", campaignToken: nil, at: Self.march1) == 9)
        #expect(rules.amount(affiliateToken: "t", campaignToken: nil, at: Self.june1 - 1) == 9)
        #expect(rules.amount(affiliateToken: "t", campaignToken: nil, at: Self.june1) == nil)
    }

    @Test func boundsAcceptOffsetsAndFractions() throws {
        let rules = try Self.parse([
            Self.rule("t", amount: "9", from: "2026-03-01T01:00:00.0009+01:00", until: "2026-06-01t00:00:00.5z")
        ])
        #expect(rules.rules.first?.from == Self.march1)
        #expect(rules.rules.first?.until == Self.june1 + 500)
    }

    // MARK: Malformed files

    @Test(
        arguments: [
            (JSONValue.array([]), nil),
            (object(["currency": .string("USD"), "rules": .array([]), "extra": .bool(true)]), "extra"),
            (object(["rules": .array([])]), "currency"),
            (object(["currency": .null, "rules": .array([])]), "currency"),
            (object(["currency": .string("usd"), "rules": .array([])]), "currency"),
            (object(["currency": .string("US"), "rules": .array([])]), "currency"),
            (object(["currency": .string("USDX"), "rules": .array([])]), "currency"),
            (object(["currency": number("840"), "rules": .array([])]), "currency"),
            (
                object(["currency": .string("USD"), "attributionWindowHours": number("0"), "rules": .array([])]),
                "attributionWindowHours"
            ),
            (
                object(["currency": .string("USD"), "attributionWindowHours": number("-1"), "rules": .array([])]),
                "attributionWindowHours"
            ),
            (
                object(["currency": .string("USD"), "attributionWindowHours": number("1.5"), "rules": .array([])]),
                "attributionWindowHours"
            ),
            (
                object(["currency": .string("USD"), "attributionWindowHours": number("1e3"), "rules": .array([])]),
                "attributionWindowHours"
            ),
            (
                object(["currency": .string("USD"), "attributionWindowHours": .string("720"), "rules": .array([])]),
                "attributionWindowHours"
            ),
            (
                object([
                    "currency": .string("USD"), "attributionWindowHours": number("9223372036854775807"),
                    "rules": .array([]),
                ]), "attributionWindowHours"
            ),
            (
                object(["currency": .string("USD"), "eligibilityFreshnessHours": number("0"), "rules": .array([])]),
                "eligibilityFreshnessHours"
            ),
            (
                object(["currency": .string("USD"), "holdingPeriodHours": number("-1"), "rules": .array([])]),
                "holdingPeriodHours"
            ),
            (
                object(["currency": .string("USD"), "holdingPeriodHours": number("0.5"), "rules": .array([])]),
                "holdingPeriodHours"
            ),
            (
                object(["currency": .string("USD"), "holdingPeriodHours": .string("1080"), "rules": .array([])]),
                "holdingPeriodHours"
            ),
            (
                object(["currency": .string("USD"), "holdingPeriodHours": .bool(true), "rules": .array([])]),
                "holdingPeriodHours"
            ),
            (
                object([
                    "currency": .string("USD"), "holdingPeriodHours": number("9223372036854775807"),
                    "rules": .array([]),
                ]), "holdingPeriodHours"
            ),
            (object(["currency": .string("USD")]), "rules"),
            (object(["currency": .string("USD"), "rules": object([:])]), "rules"),
        ] as [(JSONValue, String?)])
    func malformedTopLevel(json: JSONValue, path: String?) throws {
        let error = try #require(Self.error(json))
        #expect(error.path == path)
        if let path { #expect(error.message.contains(path)) }
    }

    @Test(
        arguments: [
            (JSONValue.string("x"), "rules[1]"),
            (
                object(["affiliateToken": .string("t"), "amountMinor": number("1"), "note": .string("x")]),
                "rules[1].note"
            ),
            (object(["amountMinor": number("1")]), "rules[1].affiliateToken"),
            (object(["affiliateToken": .string("a b"), "amountMinor": number("1")]), "rules[1].affiliateToken"),
            (object(["affiliateToken": .string(""), "amountMinor": number("1")]), "rules[1].affiliateToken"),
            (
                object(["affiliateToken": .string(String(repeating: "a", count: 65)), "amountMinor": number("1")]),
                "rules[1].affiliateToken"
            ),
            (object(["affiliateToken": .string("**"), "amountMinor": number("1")]), "rules[1].affiliateToken"),
            (object(["affiliateToken": number("7"), "amountMinor": number("1")]), "rules[1].affiliateToken"),
            (
                object(["affiliateToken": .string("t"), "campaignToken": .string("a&b"), "amountMinor": number("1")]),
                "rules[1].campaignToken"
            ),
            (
                object(["affiliateToken": .string("t"), "campaignToken": .string("why?"), "amountMinor": number("1")]),
                "rules[1].campaignToken"
            ),
            (
                object(["affiliateToken": .string("t"), "campaignToken": .string(""), "amountMinor": number("1")]),
                "rules[1].campaignToken"
            ),
            (
                object([
                    "affiliateToken": .string("t"), "campaignToken": .string(String(repeating: "é", count: 41)),
                    "amountMinor": number("1"),
                ]), "rules[1].campaignToken"
            ),
            (
                object([
                    "affiliateToken": .string("t"), "campaignToken": .string("a\u{85}"), "amountMinor": number("1"),
                ]),
                "rules[1].campaignToken"
            ),
            (object(["affiliateToken": .string("t")]), "rules[1].amountMinor"),
            (object(["affiliateToken": .string("t"), "amountMinor": number("-1")]), "rules[1].amountMinor"),
            (object(["affiliateToken": .string("t"), "amountMinor": number("1.5")]), "rules[1].amountMinor"),
            (object(["affiliateToken": .string("t"), "amountMinor": number("5e2")]), "rules[1].amountMinor"),
            (object(["affiliateToken": .string("t"), "amountMinor": .string("5")]), "rules[1].amountMinor"),
            (
                object(["affiliateToken": .string("t"), "amountMinor": number("9223372036854775808")]),
                "rules[1].amountMinor"
            ),
            (
                object(["affiliateToken": .string("t"), "amountMinor": number("1"), "from": .string("2026-03-01")]),
                "rules[1].from"
            ),
            (
                object([
                    "affiliateToken": .string("t"), "amountMinor": number("1"), "from": .string("2026-02-29T00:00:00Z"),
                ]),
                "rules[1].from"
            ),
            (
                object([
                    "affiliateToken": .string("t"), "amountMinor": number("1"),
                    "until": .string("2026-03-01 00:00:00Z"),
                ]),
                "rules[1].until"
            ),
            (
                object([
                    "affiliateToken": .string("t"), "amountMinor": number("1"),
                    "until": .string("2026-03-01T23:59:60Z"),
                ]),
                "rules[1].until"
            ),
            (
                object([
                    "affiliateToken": .string("t"), "amountMinor": number("1"), "from": .string("2026-03-01T00:00:00Z"),
                    "until": .string("2026-03-01T01:00:00+01:00"),
                ]), "rules[1].until"
            ),
            (
                object([
                    "affiliateToken": .string("t"), "amountMinor": number("1"), "from": .string("2026-06-01T00:00:00Z"),
                    "until": .string("2026-03-01T00:00:00Z"),
                ]), "rules[1].until"
            ),
        ] as [(JSONValue, String)])
    func malformedRule(rule: JSONValue, path: String) throws {
        let error = try #require(Self.error(Self.file([Self.rule("*"), rule])))
        #expect(error.path == path)
        #expect(error.message.contains(path))
    }

    @Test func amountsUpToATrillionMinorUnitsAreAccepted() throws {
        let rules = try Self.parse([Self.rule("t", amount: "1000000000000")])
        #expect(rules.amount(affiliateToken: "t", campaignToken: nil, at: 0) == 1_000_000_000_000)
    }

    @Test(arguments: ["1000000000001", "9223372036854775807", "9223372036854775808", "-1"])
    func amountsAboveATrillionAreRefusedNamingTheRule(amount: String) throws {
        let error = try #require(Self.error(Self.file([Self.rule("*"), Self.rule("t", amount: amount)])))
        #expect(error.path == "rules[1].amountMinor")
        #expect(error.message.contains("rules[1].amountMinor") && error.message.contains("1000000000000"))
    }

    @Test func duplicateRulesAreRefusedNamingBoth() throws {
        let error = try #require(
            Self.error(Self.file([Self.rule("t"), Self.rule("*"), Self.rule("t", amount: "200")])))
        #expect(error.path == "rules[2]")
        #expect(error.message.contains("rules[0]") && error.message.contains("rules[2]"))
    }

    @Test func duplicateWithSameCampaignAndSameFromInstant() throws {
        let error = try #require(
            Self.error(
                Self.file([
                    Self.rule("*", campaign: "c", from: "2026-03-01T00:00:00Z"),
                    Self.rule("*", campaign: "c", from: "2026-03-01T01:00:00+01:00", until: "2027-01-01T00:00:00Z"),
                ])))
        #expect(error.path == "rules[1]")
        #expect(error.message.contains("rules[0]"))
    }

    @Test func rulesDifferingInCampaignOrFromAreNotDuplicates() throws {
        let rules = try Self.parse([
            Self.rule("t"), Self.rule("t", campaign: "c"), Self.rule("t", campaign: "d"),
            Self.rule("t", from: "2026-03-01T00:00:00Z"), Self.rule("*"), Self.rule("u"),
        ])
        #expect(rules.rules.count == 6)
    }
}
