import JSON
import OfferTrackDomain

/// The output formats of `offertrack explain --format` (SPEC section 6).
public enum ExplanationFormat: String, Sendable, Equatable, CaseIterable {
    case text
    case json

    /// The explanation in this format, ending in `\n`.
    public func render(_ explanation: Explanation) -> String {
        switch self {
        case .text: Self.text(explanation)
        case .json: Self.json(explanation)
        }
    }

    /// One object with exactly the SPEC's keys, in its order; times as RFC 3339 UTC with milliseconds.
    public static func json(_ e: Explanation) -> String {
        func reference(_ record: RecordReference?, _ extra: [(key: String, value: JSONValue)] = []) -> JSONValue {
            guard let record else { return .null }
            return .object([("id", .string(record.id)), ("ts", .string(Timestamp.format(record.ts)))] + extra)
        }
        let presentation = e.presentation.map { RecordReference(id: $0.id, ts: $0.ts) }
        let value = JSONValue.object([
            "user": .string(e.user),
            "records": .integer(e.records),
            "conversion": reference(e.conversion),
            "presentation": reference(presentation),
            "eligibility": reference(
                e.eligibility?.record, e.eligibility.map { [("decision", .string($0.decision.rawValue))] } ?? []),
            "lapse": reference(e.lapse),
            "review": review(e.review),
            "repeats": .array(e.repeats.map { .string($0) }),
            "status": .string(e.status.rawValue),
            "reason": .string(e.reason?.rawValue),
            "amountMinor": .integer(e.amountMinor),
            "rule": .integer(e.rule),
            "qualifiesAt": .string(e.qualifiesAt.map(Timestamp.format)),
            "state": .string(e.state?.rawValue),
            "erasure": reference(e.erasure?.record, e.erasure.map { [("ticket", .string($0.ticket))] } ?? []),
        ])
        return JSONWriter.text(value) + "\n"
    }

    /// A review as `{"id","ts","decision","reason"}`, `reason` null when the record has none; `null` without one.
    private static func review(_ review: ConversionReview?) -> JSONValue {
        guard let review else { return .null }
        return .object([
            "id": .string(review.record.id), "ts": .string(Timestamp.format(review.record.ts)),
            "decision": .string(review.decision.rawValue), "reason": .string(review.reason?.rawValue),
        ])
    }

    /// The chain a person would check, one line per rule of SPEC section 4, naming record ids and times.
    public static func text(_ e: Explanation) -> String {
        let settings = e.rules.settings
        let currency = e.rules.currency
        var lines = [
            "user \(e.user): \(e.records) record\(e.records == 1 ? "" : "s"), seen at \(Timestamp.format(e.asOf))"
        ]
        if let erasure = e.erasure {
            lines.append(
                "11 forgotten: renamed by erasure \(name(erasure.record)), ticket \(erasure.ticket); amounts unchanged")
        }
        guard let conversion = e.conversion else {
            lines.append("4.1 conversion: none (no subscribed outcome): nothing to attribute, nothing earned")
            return lines.joined(separator: "\n") + "\n"
        }
        let repeats = e.repeats.isEmpty ? "no repeats" : "repeats earning nothing: " + e.repeats.joined(separator: ", ")
        lines.append("4.1 conversion: \(name(conversion)), the first subscribed outcome; \(repeats)")
        if e.reason == .sharedUser {
            lines.append(
                "4.0 shared id: \(e.user) is in the rules' sharedUsers, so it names no single person: unattributed "
                    + "(shared_user), no presentation, eligibility or lapse is looked at")
            return finish(lines, e)
        }
        guard let presentation = e.presentation else {
            lines.append("4.2 presentation: none loaded before the conversion: unattributed (no_presentation)")
            return finish(lines, e)
        }
        let how = e.presentationNamed ? "named by the conversion's offerId" : "the latest loaded presentation before it"
        lines.append(
            "4.2 presentation: \(name(RecordReference(id: presentation.id, ts: presentation.ts))), \(how); "
                + offerText(presentation.offer))
        let gap = conversion.ts - presentation.ts
        let inWindow = e.inWindow == true
        lines.append(
            "4.3 window: the conversion came \(duration(gap)) after it; the window is \(duration(settings.windowMs)): "
                + (inWindow ? "inside" : "outside, unattributed (outside_window)"))
        guard inWindow else { return finish(lines, e) }
        if let check = e.eligibility {
            let age = presentation.ts - check.record.ts
            let verdict =
                switch e.eligibilityVerdict {
                case .passes?: "fresh (freshness \(duration(settings.freshnessMs))), passes"
                case .notEligible?: "fresh, but not eligible: unattributed (not_eligible)"
                case .unknown?, nil:
                    "older than the freshness \(duration(settings.freshnessMs)), unattributed (eligibility_unknown)"
                }
            lines.append(
                "4.4 eligibility: \(name(check.record)) decided \(check.decision.rawValue), \(duration(age)) before "
                    + "the presentation; \(verdict)")
        } else {
            lines.append(
                "4.4 eligibility: no capabilities record before the presentation: unattributed (eligibility_unknown)")
        }
        guard e.status == .attributed else { return finish(lines, e) }
        switch e.reason {
        case .noAffiliate?:
            lines.append("4.5 commission: the presentation has no affiliate token: 0 (no_affiliate)")
        case .noRule?:
            lines.append("4.5 commission: no commission rule matches its tokens at the conversion's time: 0 (no_rule)")
        default:
            let index = e.rule.map { "rules[\($0)]" } ?? "a rule"
            lines.append("4.5 commission: \(index) sets \(Money.format(e.amountMinor, currency: currency)) \(currency)")
        }
        let holding = duration(settings.holdingMs)
        if let lapse = e.lapse {
            lines.append(
                "4.6 holding: lapsed: \(name(lapse)), \(duration(lapse.ts - conversion.ts)) after the conversion, "
                    + "within the holding period of \(holding): earns nothing")
        } else if let qualifiesAt = e.qualifiesAt {
            let when =
                e.state == .qualified
                ? "qualified at \(Timestamp.format(qualifiesAt))"
                : e.holdingOver == true
                    ? "its holding period ended at \(Timestamp.format(qualifiesAt))"
                    : "pending: qualifies at \(Timestamp.format(qualifiesAt)) unless one arrives before then"
            lines.append(
                "4.6 holding: no lapse record (a check without playback, or a declined outcome) within \(holding) "
                    + "after the conversion; \(when)")
        }
        return finish(lines, e)
    }

    /// Rule 4.7's line: the review (id, time, decision, reason, note) or the rule that holds; nil when neither.
    private static func reviewLine(_ e: Explanation) -> String? {
        guard let review = e.review else {
            guard e.state == .held else { return nil }
            let index = e.rule.map { "rules[\($0)]" } ?? "its rule"
            return "4.7 review: none; \(index) has \"hold\": true, so it is held until an operator releases it"
        }
        var line = "4.7 review: \(name(review.record)) decided \(review.decision.rawValue)"
        if let reason = review.reason { line += " (\(reason.rawValue))" }
        if let note = e.reviewNote { line += ", note \(JSONStringLiteral.quote(note))" }
        guard e.status == .attributed else { return line + "; unattributed conversions are not affected by reviews" }
        if e.lapse != nil { return line + "; it lapsed, which a review does not change" }
        switch review.decision {
        case .void: line += ": voided, earns nothing"
        case .hold: line += ": held, earns nothing until released"
        case .release:
            let rule = e.rule.map { "rules[\($0)]" } ?? "its rule"
            line += e.heldByRule ? ": lifts the hold of \(rule)" : ": lifts any earlier void or hold"
        }
        return line
    }

    private static func finish(_ lines: [String], _ e: Explanation) -> String {
        let lines = lines + (reviewLine(e).map { [$0] } ?? [])
        var verdict = "verdict: \(e.status.rawValue)"
        if let reason = e.reason { verdict += " (\(reason.rawValue))" }
        if let state = e.state {
            let amount = "\(Money.format(e.amountMinor, currency: e.rules.currency)) \(e.rules.currency)"
            switch state {
            case .qualified: verdict += ", qualified: earns \(amount)"
            case .pending: verdict += ", pending: \(amount) once it qualifies"
            case .lapsed: verdict += ", lapsed: earns nothing"
            case .voided: verdict += ", voided: earns nothing"
            case .held: verdict += ", held: \(amount) once released"
            }
        } else {
            verdict += ": earns nothing"
        }
        return (lines + [verdict]).joined(separator: "\n") + "\n"
    }

    private static func name(_ record: RecordReference) -> String {
        "\(record.id) at \(Timestamp.format(record.ts))"
    }

    private static func offerText(_ offer: Offer) -> String {
        "affiliate \(offer.affiliateToken ?? "(none)"), campaign \(offer.campaignToken ?? "(none)"), message "
            + offer.effectiveMessageIdentifier
    }

    /// A span of milliseconds for people: `1.880 s`, `2 min 41 s`, `45 d`, `3 d 4 h`.
    static func duration(_ ms: Int64) -> String {
        if ms < 0 { return "-" + duration(0 - ms) }
        if ms < 60_000 {
            let fraction = String(ms % 1_000)
            return "\(ms / 1_000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) s"
        }
        let units: [(Int64, String)] = [
            (Timestamp.millisecondsPerDay, "d"), (3_600_000, "h"), (60_000, "min"), (1_000, "s"),
        ]
        var rest = ms
        var parts: [String] = []
        for (size, unit) in units where rest >= size && parts.count < 2 {
            parts.append("\(rest / size) \(unit)")
            rest %= size
        }
        return parts.joined(separator: " ")
    }
}
