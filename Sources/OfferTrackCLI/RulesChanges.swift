import OfferTrackDomain

/// What a rules file changes against the rules in force (`offertrack rules check FILE --rules CURRENT`): each
/// top-level key whose value differs, then each rule added, removed or changed. A rule is known by what makes it
/// unique in a file (SPEC 5): its `affiliateToken`, `campaignToken` and `from`.
struct RulesChanges {
    /// One line per change, in the file's key order, then the rules in the new file's order, removed ones last.
    let lines: [String]
    /// Whether `attributionWindowHours` or `eligibilityFreshnessHours` differs: on a reload the daemon then
    /// recomputes every derived table.
    let windowsChange: Bool
    /// Whether some conversion's amount, hold or holding period may differ (anything but the currency, the
    /// payout minimum and the windows alone).
    let moneyMayChange: Bool

    init(from current: CommissionRules, to new: CommissionRules) {
        var lines: [String] = []
        func compare(_ key: String, _ old: String, _ now: String, _ note: String = "") {
            if old != now { lines.append("\(key): \(old) -> \(now)\(note)") }
        }
        let recompute = " (a reload recomputes every derived table)"
        compare("currency", current.currency, new.currency)
        compare(
            "attributionWindowHours", Self.hours(current.settings.windowMs), Self.hours(new.settings.windowMs),
            recompute)
        compare(
            "eligibilityFreshnessHours", Self.hours(current.settings.freshnessMs),
            Self.hours(new.settings.freshnessMs), recompute)
        compare("holdingPeriodHours", Self.hours(current.settings.holdingMs), Self.hours(new.settings.holdingMs))
        compare("payoutMinimumMinor", "\(current.payoutMinimumMinor)", "\(new.payoutMinimumMinor)")
        compare(
            "retentionDays", current.retentionDays.map { "\($0)" } ?? "absent",
            new.retentionDays.map { "\($0)" } ?? "absent", " (the next offertrack seal uses it)")
        let oldShared = current.settings.sharedUsers
        let newShared = new.settings.sharedUsers
        let added = newShared.entries.filter { !oldShared.contains($0) }
        let removed = oldShared.entries.filter { !newShared.contains($0) }
        if !added.isEmpty || !removed.isEmpty {
            let parts = [("added", added), ("removed", removed)].filter { !$0.1.isEmpty }
            lines.append(
                "sharedUsers: "
                    + parts.map { "\($0.0) \($0.1.map { "\"\($0)\"" }.joined(separator: ", "))" }
                    .joined(separator: "; "))
        }
        let settingsLines = lines.count
        var oldByIdentity: [String: (index: Int, rule: CommissionRule)] = [:]
        for (index, rule) in current.rules.enumerated() { oldByIdentity[Self.identity(rule)] = (index, rule) }
        var kept: Set<String> = []
        for (index, rule) in new.rules.enumerated() {
            let identity = Self.identity(rule)
            guard let old = oldByIdentity[identity] else {
                lines.append("rules[\(index)] added: \(identity)\(Self.terms(rule))")
                continue
            }
            kept.insert(identity)
            var differences: [String] = []
            if old.rule.amountMinor != rule.amountMinor {
                differences.append("amountMinor \(old.rule.amountMinor) -> \(rule.amountMinor)")
            }
            if old.rule.until != rule.until {
                differences.append("until \(Self.instant(old.rule.until)) -> \(Self.instant(rule.until))")
            }
            if old.rule.hold != rule.hold { differences.append("hold \(old.rule.hold) -> \(rule.hold)") }
            if !differences.isEmpty {
                lines.append("rules[\(index)] changed: \(identity): " + differences.joined(separator: ", "))
            }
        }
        for (index, rule) in current.rules.enumerated() where !kept.contains(Self.identity(rule)) {
            lines.append("rules[\(index)] of the rules in force removed: \(Self.identity(rule))\(Self.terms(rule))")
        }
        self.lines = lines
        windowsChange =
            current.settings.windowMs != new.settings.windowMs
            || current.settings.freshnessMs != new.settings.freshnessMs
        moneyMayChange =
            windowsChange || lines.count > settingsLines || current.settings.holdingMs != new.settings.holdingMs
            || current.settings.sharedUsers != new.settings.sharedUsers
    }

    /// A file's keys in one line: what `rules check` prints of a valid file.
    static func summary(_ rules: CommissionRules) -> String {
        let shared = rules.settings.sharedUsers
        let sharedText =
            shared == .defaults
            ? "the built-in list" : "\(shared.entries.count) \(shared.entries.count == 1 ? "id" : "ids")"
        return "currency \(rules.currency), attributionWindowHours \(hours(rules.settings.windowMs)), "
            + "eligibilityFreshnessHours \(hours(rules.settings.freshnessMs)), "
            + "holdingPeriodHours \(hours(rules.settings.holdingMs)), payoutMinimumMinor \(rules.payoutMinimumMinor), "
            + "sharedUsers \(sharedText), retentionDays \(rules.retentionDays.map { "\($0)" } ?? "absent"), "
            + "\(rules.rules.count) \(rules.rules.count == 1 ? "rule" : "rules")"
    }

    private static func hours(_ ms: Int64) -> String { "\(ms / 3_600_000)" }

    private static func instant(_ ms: Int64?) -> String { ms.map(Timestamp.format) ?? "none" }

    /// `affiliateToken X[, campaignToken C][, from F]`: what no two rules of a file share.
    private static func identity(_ rule: CommissionRule) -> String {
        var parts = ["affiliateToken \(rule.affiliateToken)"]
        if let campaign = rule.campaignToken { parts.append("campaignToken \(campaign)") }
        if let from = rule.from { parts.append("from \(Timestamp.format(from))") }
        return parts.joined(separator: ", ")
    }

    /// `, amountMinor A[, until U][, hold]`: the rest of a rule.
    private static func terms(_ rule: CommissionRule) -> String {
        var text = ", amountMinor \(rule.amountMinor)"
        if let until = rule.until { text += ", until \(Timestamp.format(until))" }
        if rule.hold { text += ", hold" }
        return text
    }
}
