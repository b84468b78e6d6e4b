import OfferTrackDomain
import SQLite

/// Pending changes to the daily roll-ups (`presentation_days`, `conversion_days`), netted in memory and written
/// with one upsert per touched group.
struct DayRollup: Sendable {
    /// A roll-up group (absent tokens as ""); text compared by exact scalars.
    struct Key: Hashable, Sendable {
        var day: Int64
        var attributed: Int64
        var affiliate: ExactString
        var campaign: ExactString
        var message: ExactString
    }

    static let dayMs: Int64 = 86_400_000

    /// SQL for the UTC day number of the `ts` column, floored like `day(of:)` (SQLite's `/` truncates).
    static let daySQL = "(ts - ((ts % 86400000) + 86400000) % 86400000) / 86400000"

    /// The UTC day number of `ts` (floor division, so times before 1970 fall on the right day).
    static func day(of ts: Int64) -> Int64 {
        ts >= 0 ? ts / dayMs : -((-ts - 1) / dayMs) - 1
    }

    private(set) var presentations: [Key: (presented: Int64, eligible: Int64)] = [:]
    private(set) var conversions: [Key: Int64] = [:]

    var isEmpty: Bool { presentations.isEmpty && conversions.isEmpty }

    mutating func count(_ fact: PresentationFact, sign: Int64) {
        let key = Key(
            day: Self.day(of: fact.ts), attributed: 0, affiliate: ExactString(fact.offer.affiliateToken ?? ""),
            campaign: ExactString(fact.offer.campaignToken ?? ""),
            message: ExactString(fact.offer.effectiveMessageIdentifier))
        Self.add(presented: sign, eligible: fact.eligible ? sign : 0, to: &presentations[key, default: (0, 0)])
    }

    /// One dictionary lookup for both counts.
    private static func add(presented: Int64, eligible: Int64, to counts: inout (presented: Int64, eligible: Int64)) {
        counts.presented += presented
        counts.eligible += eligible
    }

    mutating func count(_ conversion: Conversion, sign: Int64) {
        let none = ExactString("")
        var key = Key(
            day: Self.day(of: conversion.ts), attributed: 0, affiliate: none, campaign: none, message: none)
        if conversion.status.isAttributed, let offer = conversion.presentation?.offer {
            key.attributed = 1
            key.affiliate = ExactString(offer.affiliateToken ?? "")
            key.campaign = ExactString(offer.campaignToken ?? "")
            key.message = ExactString(offer.effectiveMessageIdentifier)
        }
        conversions[key, default: 0] += sign
    }

    /// Adds the netted changes to the roll-up tables.
    func write(on connection: Connection) throws {
        if !presentations.isEmpty {
            let upsert = try connection.prepare(
                static: """
                    INSERT INTO presentation_days (day, affiliate_token, campaign_token, message_identifier, presented,
                        eligible) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                    ON CONFLICT DO UPDATE SET presented = presented + excluded.presented,
                        eligible = eligible + excluded.eligible
                    """)
            for (key, delta) in presentations where delta.presented != 0 || delta.eligible != 0 {
                try upsert.bind(key.day, at: 1)
                try upsert.bind(key.affiliate.value, at: 2)
                try upsert.bind(key.campaign.value, at: 3)
                try upsert.bind(key.message.value, at: 4)
                try upsert.bind(delta.presented, at: 5)
                try upsert.bind(delta.eligible, at: 6)
                try upsert.run()
            }
        }
        if !conversions.isEmpty {
            let upsert = try connection.prepare(
                static: """
                    INSERT INTO conversion_days (day, attributed, affiliate_token, campaign_token, message_identifier,
                        conversions) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                    ON CONFLICT DO UPDATE SET conversions = conversions + excluded.conversions
                    """)
            for (key, delta) in conversions where delta != 0 {
                try upsert.bind(key.day, at: 1)
                try upsert.bind(key.attributed, at: 2)
                try upsert.bind(key.affiliate.value, at: 3)
                try upsert.bind(key.campaign.value, at: 4)
                try upsert.bind(key.message.value, at: 5)
                try upsert.bind(delta, at: 6)
                try upsert.run()
            }
        }
    }
}
