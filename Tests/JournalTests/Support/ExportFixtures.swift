import AttributionJoin
import JournalStore
import OfferTrackDomain
import PublishedLedger
import Simulator
import WireFormat

/// The export tests' fixtures: rules, submissions, lapses, expected totals, simulated days, a journal of one and
/// small export limits.
enum ExportFixtures {
    /// Chunks of 7 ledger changes, CSV parts of 100 bytes and reads of 5 conversions: a day of a few dozen rows
    /// takes many transactions.
    static let small = ExportLimits(partBytes: 100, entriesPerChunk: 7, conversionsPerRead: 5)

    /// The simulator's day `index` (0 is its first).
    static func day(_ index: Int) -> String {
        Timestamp.formatDay(WorkloadSimulator.defaultStart + Int64(index) * Timestamp.millisecondsPerDay)
    }

    /// A journal at `path` with a simulated first day.
    static func journal(at path: String) throws -> JournalWriter {
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        _ = try writer.append(
            submissions(WorkloadSimulator(users: 300, seed: 31, days: 1).lines), receivedAt: 0)
        return writer
    }

    /// Rules paying `star` for every affiliate token and `special` for `1010lKxy`.
    static func rules(_ star: Int, _ special: Int, windowHours: Int = 720, holdingHours: Int = 0) throws -> RulesFile {
        let text = """
            {"currency":"USD","attributionWindowHours":\(windowHours),"holdingPeriodHours":\(holdingHours),
            "rules":[{"affiliateToken":"*","amountMinor":\(star)},
            {"affiliateToken":"1010lKxy","amountMinor":\(special)}]}
            """
        return try RulesFile(bytes: Array(text.utf8))
    }

    /// The valid lines of `lines` as the writer's submissions.
    static func submissions(_ lines: some Sequence<String>) -> [Submission] {
        lines.compactMap { line in
            guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else { return nil }
            return Submission(record: record, line: Array(line.utf8))
        }
    }

    /// The signed amounts of a CSV's data rows.
    static func amounts(_ csv: [UInt8]) -> Int64 {
        let text = String(decoding: csv, as: UTF8.self)
        return text.split(separator: "\n").dropFirst().reduce(Int64(0)) { sum, line in
            // amount_minor is the third field from the end (currency and original_date have no commas).
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            return sum + (Int64(fields[fields.count - 3]) ?? 0)
        }
    }

    /// 2027-06-01T00:00:00Z: after every simulated day has ended.
    static let later: Int64 = 1_811_808_000_000

    /// The total commission of `days` recomputed from `lines` alone (rules 4.1–4.6 in memory): every attributed
    /// conversion with an affiliate token that did not lapse, on the day it qualifies.
    static func expectedTotal(of lines: [String], days: Set<String>, rules: CommissionRules) -> Int64 {
        var byUser: [String: [Record]] = [:]
        for submission in submissions(lines) { byUser[submission.record.user, default: []].append(submission.record) }
        var total: Int64 = 0
        for records in byUser.values {
            var unique: [String: Record] = [:]
            for record in records { unique[record.id] = record }
            let attribution = Attribution.attribute(userRecords: Array(unique.values), settings: rules.settings)
            guard let conversion = attribution.conversion, conversion.status.isAttributed, conversion.lapse == nil,
                let offer = conversion.presentation?.offer, let token = offer.affiliateToken
            else { continue }
            let day = Timestamp.formatDay(rules.settings.qualifiesAt(conversionAt: conversion.ts))
            guard days.contains(day) else { continue }
            // Rule 4.7, computed here on its own: the latest review naming the conversion, by (ts, id bytes).
            let reviews = unique.values.compactMap { record -> (Int64, String, ReviewDecision)? in
                guard case .review(let review) = record.body, review.conversion == conversion.id else { return nil }
                return (record.ts, record.id, review.decision)
            }
            let latest = reviews.max {
                $0.0 != $1.0 ? $0.0 < $1.0 : Array($0.1.utf8).lexicographicallyPrecedes(Array($1.1.utf8))
            }
            if let latest, latest.2 != .release { continue }
            total += rules.amount(affiliateToken: token, campaignToken: offer.campaignToken, at: conversion.ts) ?? 0
        }
        return total
    }

    /// A capabilities check without playback for `user` at `ts`: a lapse record (rule 4.6).
    static func lapseLine(user: String, ts: Int64, number: Int) -> String {
        "{\"type\":\"capabilities\",\"id\":\"lapse-\(number)\",\"ts\":\"\(Timestamp.format(ts))\","
            + "\"user\":\(JSONStringLiteral.quote(user)),\"authorization\":\"authorized\",\"capabilities\":2}"
    }
}
