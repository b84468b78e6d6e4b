import JSON
import OfferTrackDomain

/// Loading the commission rules file (SPEC section 5) from its parsed JSON: every key checked, tokens by the
/// validator records use (`Token`).
extension CommissionRules {
    /// Validates a parsed rules file; the error names the offending key or rule index.
    ///
    /// A member whose value is `null` counts as absent, as for records (SPEC 2).
    public init(json: JSONValue) throws(RulesError) {
        guard case .object(let object) = json else {
            throw RulesError(path: nil, "the rules file must be a JSON object")
        }
        let known = [
            "currency", "attributionWindowHours", "eligibilityFreshnessHours", "holdingPeriodHours",
            "payoutMinimumMinor", "retentionDays", "rules", "sharedUsers",
        ]
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
        let payoutMinimum = try Self.payoutMinimum(object)
        let retentionDays = try Self.retentionDays(object, windowMs: window, freshnessMs: freshness)
        let sharedUsers = try Self.sharedUsers(object)
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
            settings: AttributionSettings(
                windowMs: window, freshnessMs: freshness, holdingMs: holding, sharedUsers: sharedUsers),
            rules: rules,
            payoutMinimumMinor: payoutMinimum,
            retentionDays: retentionDays
        )
    }

    /// `retentionDays` (SPEC 5, 12): absent keeps raw records forever; otherwise a JSON integer from K + 2 to
    /// 36,500, K = ceil((W + F) / 24 h). Unlike the other keys, `null` is not "absent": it is refused.
    private static func retentionDays(
        _ object: JSONObject, windowMs: Int64, freshnessMs: Int64
    ) throws(RulesError) -> Int64? {
        guard let value = object["retentionDays"] else { return nil }
        let minimum = Retention.minimumDays(windowMs: windowMs, freshnessMs: freshnessMs)
        guard case .number(let number) = value, let days = number.int64Value, days >= minimum,
            days <= Retention.maximumDays
        else {
            throw RulesError(
                path: "retentionDays",
                "retentionDays must be an integer from \(minimum) (K + 2, K = ceil((W + F) / 24 h)) to "
                    + "\(Retention.maximumDays)")
        }
        return days
    }

    /// `payoutMinimumMinor` (SPEC 5, 7.1): an integer of at least 0 in the currency's minor unit, default 0.
    private static func payoutMinimum(_ object: JSONObject) throws(RulesError) -> Int64 {
        guard let value = present(object["payoutMinimumMinor"]) else { return 0 }
        guard case .number(let number) = value, let minimum = number.int64Value, minimum >= 0 else {
            throw RulesError(
                path: "payoutMinimumMinor",
                "payoutMinimumMinor must be an integer of at least 0 in the currency's minor unit")
        }
        return minimum
    }

    /// `sharedUsers` (SPEC 5, rule 4.0): 0–1,000 valid `user` values, distinct as written; the SPEC's list when
    /// absent, `[]` for none.
    private static func sharedUsers(_ object: JSONObject) throws(RulesError) -> SharedUsers {
        guard let value = present(object["sharedUsers"]) else { return .defaults }
        let rule =
            "sharedUsers must be an array of at most 1000 distinct users (1–128 characters, no control characters)"
        guard case .array(let items) = value, items.count <= 1000 else {
            throw RulesError(path: "sharedUsers", rule)
        }
        var entries: [String] = []
        var seen = Set<ExactString>()
        for (index, item) in items.enumerated() {
            guard case .string(let user) = item else {
                throw RulesError(path: "sharedUsers", "sharedUsers[\(index)] is not a string: \(rule)")
            }
            let (scalars, hasControl) = Token.measure(user)
            guard scalars >= 1, scalars <= 128, !hasControl else {
                throw RulesError(path: "sharedUsers", "sharedUsers[\(index)] is not a valid user: \(rule)")
            }
            guard seen.insert(ExactString(user)).inserted else {
                throw RulesError(path: "sharedUsers", "sharedUsers[\(index)] repeats an entry: \(rule)")
            }
            entries.append(user)
        }
        return SharedUsers(entries)
    }

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
        let known = ["affiliateToken", "campaignToken", "amountMinor", "from", "until", "hold"]
        for member in object.members where !known.contains(member.key) {
            throw RulesError(path: "\(at).\(member.key)", "unknown key \(at).\(member.key)")
        }
        guard let tokenValue = present(object["affiliateToken"]) else {
            throw RulesError(path: "\(at).affiliateToken", "\(at).affiliateToken is required")
        }
        guard case .string(let token) = tokenValue,
            token == CommissionRule.anyAffiliate || Token.isAffiliateToken(token)
        else {
            throw RulesError(
                path: "\(at).affiliateToken",
                "\(at).affiliateToken must be * or 1–64 characters of A–Z, a–z, 0–9, _ and -"
            )
        }
        var campaign: String?
        if let campaignValue = present(object["campaignToken"]) {
            guard case .string(let text) = campaignValue, Token.isCampaignToken(text) else {
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
        guard case .number(let number) = amountValue, let amount = number.int64Value, amount >= 0,
            amount <= CommissionRule.maximumAmountMinor
        else {
            throw RulesError(
                path: "\(at).amountMinor",
                "\(at).amountMinor must be an integer from 0 to 1000000000000 in the currency's minor unit"
            )
        }
        let from = try instant(object, "from", at: at)
        let until = try instant(object, "until", at: at)
        if let from, let until, from >= until {
            throw RulesError(path: "\(at).until", "\(at).until must be later than \(at).from")
        }
        var hold = false
        if let holdValue = present(object["hold"]) {
            guard case .bool(let flag) = holdValue else {
                throw RulesError(path: "\(at).hold", "\(at).hold must be true or false")
            }
            hold = flag
        }
        return CommissionRule(
            affiliateToken: token,
            campaignToken: campaign,
            amountMinor: amount,
            from: from,
            until: until,
            hold: hold
        )
    }

    private static func instant(_ object: JSONObject, _ key: String, at: String) throws(RulesError) -> Int64? {
        guard let value = present(object[key]) else { return nil }
        guard case .string(let text) = value, let ms = Timestamp.parse(text) else {
            throw RulesError(path: "\(at).\(key)", "\(at).\(key) must be an RFC 3339 date-time")
        }
        return ms
    }
}
