/// The commission rules file of SPEC section 5: currency, windows and rules, validated.
public struct CommissionRules: Sendable, Equatable {
    /// The ISO 4217 currency code amounts are in.
    public let currency: String
    /// The attribution window, eligibility freshness and holding period the file configures.
    public let settings: AttributionSettings
    /// The rules, in file order.
    public let rules: [CommissionRule]

    /// What applies when no rules file is given: USD, default windows, no rules.
    public static let defaults = CommissionRules(currency: "USD", settings: .defaults, rules: [])

    /// Rules built in code, taken as given (not validated; `init(json:)` validates a file). Among equally specific
    /// matching rules with the same `from`, the first wins.
    public init(currency: String, settings: AttributionSettings, rules: [CommissionRule]) {
        self.currency = currency
        self.settings = settings
        self.rules = rules
    }

    /// Validates a parsed rules file; the error names the offending key or rule index.
    ///
    /// A member whose value is `null` counts as absent, as for records (SPEC 2).
    public init(json: JSONValue) throws(RulesError) {
        guard case .object(let object) = json else {
            throw RulesError(path: nil, "the rules file must be a JSON object")
        }
        let known = ["currency", "attributionWindowHours", "eligibilityFreshnessHours", "holdingPeriodHours", "rules"]
        for member in object.members where !known.contains(member.key) {
            throw RulesError(path: member.key, "unknown key \(member.key) in the rules file")
        }
        guard let currencyValue = Self.present(object["currency"]) else {
            throw RulesError(path: "currency", "currency is required")
        }
        guard case .string(let currency) = currencyValue, Self.isCurrencyCode(currency) else {
            throw RulesError(path: "currency", "currency must be an ISO 4217 code (three uppercase letters)")
        }
        let window = try Self.hours(object, "attributionWindowHours", default: 720)
        let freshness = try Self.hours(object, "eligibilityFreshnessHours", default: 24)
        let holding = try Self.hours(object, "holdingPeriodHours", default: 0, allowZero: true)
        guard let rulesValue = Self.present(object["rules"]) else {
            throw RulesError(path: "rules", "rules is required")
        }
        guard case .array(let items) = rulesValue else {
            throw RulesError(path: "rules", "rules must be an array")
        }
        var rules: [CommissionRule] = []
        var seen: [RuleIdentity: Int] = [:]
        for (index, item) in items.enumerated() {
            let rule = try Self.rule(item, index: index)
            let identity = RuleIdentity(rule)
            if let first = seen[identity] {
                throw RulesError(
                    path: "rules[\(index)]",
                    "rules[\(first)] and rules[\(index)] have the same affiliateToken, campaignToken and from"
                )
            }
            seen[identity] = index
            rules.append(rule)
        }
        self.init(
            currency: currency,
            settings: AttributionSettings(windowMs: window, freshnessMs: freshness, holdingMs: holding),
            rules: rules
        )
    }

    /// The most specific matching rule (SPEC 5), ties broken by the latest `from`; nil when none matches.
    public func rule(affiliateToken: String, campaignToken: String?, at ts: Int64) -> CommissionRule? {
        ruleIndex(affiliateToken: affiliateToken, campaignToken: campaignToken, at: ts).map { rules[$0] }
    }

    /// The index in the file of the rule `rule(affiliateToken:campaignToken:at:)` picks; nil when none matches.
    public func ruleIndex(affiliateToken: String, campaignToken: String?, at ts: Int64) -> Int? {
        var best: Int?
        for (index, rule) in rules.enumerated()
        where rule.matches(affiliateToken: affiliateToken, campaignToken: campaignToken, at: ts) {
            guard let currentIndex = best else {
                best = index
                continue
            }
            let current = rules[currentIndex]
            if rule.specificity != current.specificity {
                if rule.specificity > current.specificity { best = index }
            } else if (rule.from ?? .min) > (current.from ?? .min) {
                best = index
            }
        }
        return best
    }

    /// The commission for a conversion with these tokens at `ts`; nil when no rule matches.
    public func amount(affiliateToken: String, campaignToken: String?, at ts: Int64) -> Int64? {
        rule(affiliateToken: affiliateToken, campaignToken: campaignToken, at: ts)?.amountMinor
    }

    // MARK: - Validation

    /// What makes two rules duplicates: affiliate token, campaign token and `from`.
    private struct RuleIdentity: Hashable {
        var affiliateToken: ExactString
        var campaignToken: ExactString?
        var from: Int64?

        init(_ rule: CommissionRule) {
            affiliateToken = ExactString(rule.affiliateToken)
            campaignToken = rule.campaignToken.map(ExactString.init)
            from = rule.from
        }
    }

    private static func present(_ value: JSONValue?) -> JSONValue? {
        if let value, value != .null { return value }
        return nil
    }

    private static func isCurrencyCode(_ text: String) -> Bool {
        text.utf8.count == 3 && text.utf8.allSatisfy { (0x41...0x5A).contains($0) }
    }

    /// A whole number of hours, in milliseconds: positive, or at least 0 with `allowZero`.
    private static func hours(
        _ object: JSONObject, _ key: String, default fallback: Int64, allowZero: Bool = false
    ) throws(RulesError) -> Int64 {
        guard let value = present(object[key]) else { return fallback * 3_600_000 }
        guard case .number(let number) = value, let hours = number.int64Value, hours > 0 || (allowZero && hours == 0)
        else {
            throw RulesError(
                path: key, "\(key) must be " + (allowZero ? "an integer of at least 0" : "a positive integer"))
        }
        let (ms, overflow) = hours.multipliedReportingOverflow(by: 3_600_000)
        guard !overflow else { throw RulesError(path: key, "\(key) is too large") }
        return ms
    }

    private static func rule(_ value: JSONValue, index: Int) throws(RulesError) -> CommissionRule {
        let at = "rules[\(index)]"
        guard case .object(let object) = value else {
            throw RulesError(path: at, "\(at) must be an object")
        }
        let known = ["affiliateToken", "campaignToken", "amountMinor", "from", "until"]
        for member in object.members where !known.contains(member.key) {
            throw RulesError(path: "\(at).\(member.key)", "unknown key \(at).\(member.key)")
        }
        guard let tokenValue = present(object["affiliateToken"]) else {
            throw RulesError(path: "\(at).affiliateToken", "\(at).affiliateToken is required")
        }
        guard case .string(let token) = tokenValue, token == CommissionRule.anyAffiliate || isAffiliateToken(token)
        else {
            throw RulesError(
                path: "\(at).affiliateToken",
                "\(at).affiliateToken must be * or 1–64 characters of A–Z, a–z, 0–9, _ and -"
            )
        }
        var campaign: String?
        if let campaignValue = present(object["campaignToken"]) {
            guard case .string(let text) = campaignValue, isCampaignToken(text) else {
                throw RulesError(
                    path: "\(at).campaignToken",
                    "\(at).campaignToken must be 1–40 characters without control characters, ?, ! or &"
                )
            }
            campaign = text
        }
        guard let amountValue = present(object["amountMinor"]) else {
            throw RulesError(path: "\(at).amountMinor", "\(at).amountMinor is required")
        }
        guard case .number(let number) = amountValue, let amount = number.int64Value, amount >= 0 else {
            throw RulesError(
                path: "\(at).amountMinor",
                "\(at).amountMinor must be an integer of at least 0 in the currency's minor unit"
            )
        }
        let from = try instant(object, "from", at: at)
        let until = try instant(object, "until", at: at)
        if let from, let until, from >= until {
            throw RulesError(path: "\(at).until", "\(at).until must be later than \(at).from")
        }
        return CommissionRule(
            affiliateToken: token,
            campaignToken: campaign,
            amountMinor: amount,
            from: from,
            until: until
        )
    }

    private static func instant(_ object: JSONObject, _ key: String, at: String) throws(RulesError) -> Int64? {
        guard let value = present(object[key]) else { return nil }
        guard case .string(let text) = value, let ms = Timestamp.parse(text) else {
            throw RulesError(path: "\(at).\(key)", "\(at).\(key) must be an RFC 3339 date-time")
        }
        return ms
    }

    /// 1–64 characters of `[A-Za-z0-9_-]` (SPEC 3.2).
    static func isAffiliateToken(_ text: String) -> Bool {
        let bytes = text.utf8
        return (1...64).contains(bytes.count)
            && bytes.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x5F || byte == 0x2D
            }
    }

    /// 1–40 scalars, no control characters, none of `?`, `!`, `&` (SPEC 3.2).
    static func isCampaignToken(_ text: String) -> Bool {
        let scalars = text.unicodeScalars
        return (1...40).contains(scalars.count)
            && scalars.allSatisfy { scalar in
                let v = scalar.value
                return !(v <= 0x1F || (0x7F...0x9F).contains(v) || v == 0x3F || v == 0x21 || v == 0x26)
            }
    }
}

extension CommissionRules {
    /// Whether every amount is the same at every instant of `[start, end)`: no rule starts or ends inside it.
    public func amountsAreConstant(from start: Int64, until end: Int64) -> Bool {
        rules.allSatisfy { rule in
            !(rule.from.map { $0 > start && $0 < end } ?? false)
                && !(rule.until.map { $0 > start && $0 < end } ?? false)
        }
    }
}
