import OfferTrackDomain
import SQLite

/// Attribution's derived tables: each user's loaded presentations (with rule 4.4's verdict) and conversion.
///
/// They are a cache of `Attribution.attribute` over the journal, keyed by user: whenever a user's records change,
/// that user's rows are recomputed from all of their records, so the tables always equal a recomputation from
/// scratch under the windows recorded in `meta`.
enum DerivedTables {
    static let windowKey = "derived_window_ms"
    static let freshnessKey = "derived_freshness_ms"

    /// The windows the derived tables were computed with; nil when they never were.
    static func settings(on connection: Connection) throws -> AttributionSettings? {
        let statement = try connection.prepare("SELECT key, value FROM meta WHERE key IN (?1, ?2)")
        try statement.bind(windowKey, at: 1)
        try statement.bind(freshnessKey, at: 2)
        defer { statement.reset() }
        var window: Int64?
        var freshness: Int64?
        while try statement.step() {
            let value = statement.text(1).flatMap { Int64($0) }
            if statement.text(0) == windowKey { window = value } else { freshness = value }
        }
        guard let window, let freshness else { return nil }
        return AttributionSettings(windowMs: window, freshnessMs: freshness)
    }

    /// Recomputes one user's rows from their journaled records; rows and roll-ups change only if the result did.
    static func refresh(user: String, settings: AttributionSettings, on connection: Connection) throws {
        let records = try JournalRows.records(of: user, on: connection)
        let now = Attribution.attribute(userRecords: records, settings: settings)
        let before = try stored(user: user, on: connection)
        if fingerprint(before) == fingerprint(now) { return }
        var rollup = DayRollup()
        count(before, sign: -1, into: &rollup)
        count(now, sign: 1, into: &rollup)
        for sql in [
            "DELETE FROM derived_presentations WHERE user = ?1", "DELETE FROM derived_conversions WHERE user = ?1",
        ] {
            let delete = try connection.prepare(sql)
            try delete.bind(user, at: 1)
            try delete.run()
        }
        try insert(user: user, now, on: connection)
        try rollup.write(on: connection)
    }

    /// Replaces everything from scratch (inside the caller's transaction) under `settings`.
    static func rebuild(settings: AttributionSettings, on connection: Connection) throws {
        try connection.execute(
            """
            DELETE FROM derived_presentations; DELETE FROM derived_conversions;
            DELETE FROM presentation_days; DELETE FROM conversion_days;
            """)
        var rollup = DayRollup()
        try JournalRows.forEachUser(on: connection) { user, records in
            let attribution = Attribution.attribute(userRecords: records, settings: settings)
            try insert(user: user, attribution, on: connection)
            count(attribution, sign: 1, into: &rollup)
        }
        try rollup.write(on: connection)
        let store = try connection.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")
        for (key, value) in [(windowKey, settings.windowMs), (freshnessKey, settings.freshnessMs)] {
            try store.bind(key, at: 1)
            try store.bind(String(value), at: 2)
            try store.run()
        }
    }

    private static func count(_ attribution: UserAttribution, sign: Int64, into rollup: inout DayRollup) {
        for fact in attribution.presentations { rollup.count(fact, sign: sign) }
        if let conversion = attribution.conversion { rollup.count(conversion, sign: sign) }
    }

    /// The user's rows as stored, in the shape `Attribution.attribute` returns.
    static func stored(user: String, on connection: Connection) throws -> UserAttribution {
        let presentations = try connection.prepare(
            """
            SELECT id, ts, affiliate_token, campaign_token, message_identifier, item_id, eligible
            FROM derived_presentations WHERE user = ?1
            """)
        try presentations.bind(user, at: 1)
        defer { presentations.reset() }
        var facts: [PresentationFact] = []
        while try presentations.step() {
            let p = presentations
            let offer = Offer(
                affiliateToken: p.text(2), campaignToken: p.text(3), messageIdentifier: p.text(4), itemID: p.text(5))
            facts.append(PresentationFact(id: p.text(0) ?? "", ts: p.int64(1), offer: offer, eligible: p.int64(6) == 1))
        }
        let conversions = try connection.prepare("SELECT \(conversionColumns) FROM derived_conversions WHERE user = ?1")
        try conversions.bind(user, at: 1)
        defer { conversions.reset() }
        let conversion = try conversions.step() ? DerivedTables.conversion(from: conversions) : nil
        return UserAttribution(presentations: facts, conversion: conversion)
    }

    /// Every stored column of a user's rows, as bytes, for change detection by exact content.
    static func fingerprint(_ attribution: UserAttribution) -> [UInt8] {
        var bytes: [UInt8] = []
        func add(_ text: String?) {
            if let text { bytes.append(contentsOf: text.utf8) }
            bytes.append(text == nil ? 1 : 0)
        }
        let ordered = attribution.presentations.sorted {
            RecordOrder.precedes(ts: $0.ts, id: $0.id, ts: $1.ts, id: $1.id)
        }
        for fact in ordered {
            add(fact.id)
            add(String(fact.ts))
            add(fact.offer.affiliateToken)
            add(fact.offer.campaignToken)
            add(fact.offer.effectiveMessageIdentifier)
            add(fact.offer.itemID)
            add(fact.eligible ? "1" : "0")
        }
        if let conversion = attribution.conversion {
            add(conversion.id)
            add(String(conversion.ts))
            if case .unattributed(let reason) = conversion.status { add(reason.rawValue) } else { add(nil) }
            add(conversion.presentation?.id)
            add(conversion.presentation.map { String($0.ts) })
            add(conversion.presentation?.offer.affiliateToken)
            add(conversion.presentation?.offer.campaignToken)
            add(conversion.presentation?.offer.effectiveMessageIdentifier)
            add(conversion.presentation?.offer.itemID)
        }
        return bytes
    }

    private static func insert(user: String, _ attribution: UserAttribution, on connection: Connection) throws {
        if !attribution.presentations.isEmpty {
            let insert = try connection.prepare(
                """
                INSERT INTO derived_presentations (id, user, ts, affiliate_token, campaign_token, message_identifier,
                    item_id, eligible) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                """)
            for fact in attribution.presentations {
                try insert.bind(fact.id, at: 1)
                try insert.bind(user, at: 2)
                try insert.bind(fact.ts, at: 3)
                try insert.bind(fact.offer.affiliateToken, at: 4)
                try insert.bind(fact.offer.campaignToken, at: 5)
                try insert.bind(fact.offer.effectiveMessageIdentifier, at: 6)
                try insert.bind(fact.offer.itemID, at: 7)
                try insert.bind(fact.eligible ? 1 : 0, at: 8)
                try insert.run()
            }
        }
        guard let conversion = attribution.conversion else { return }
        let insert = try connection.prepare(
            """
            INSERT INTO derived_conversions (user, id, ts, reason, offer_id, presented_at, affiliate_token,
                campaign_token, message_identifier, item_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
            """)
        try insert.bind(user, at: 1)
        try insert.bind(conversion.id, at: 2)
        try insert.bind(conversion.ts, at: 3)
        if case .unattributed(let reason) = conversion.status { try insert.bind(reason.rawValue, at: 4) }
        if let presentation = conversion.presentation {
            try insert.bind(presentation.id, at: 5)
            try insert.bind(presentation.ts, at: 6)
            try insert.bind(presentation.offer.affiliateToken, at: 7)
            try insert.bind(presentation.offer.campaignToken, at: 8)
            try insert.bind(presentation.offer.effectiveMessageIdentifier, at: 9)
            try insert.bind(presentation.offer.itemID, at: 10)
        }
        try insert.run()
    }

    /// Decodes a `derived_conversions` row selected as `conversionColumns` (from column `offset`).
    static func conversion(from row: Statement, offset: Int32 = 0) -> Conversion {
        let status: ConversionStatus =
            row.text(offset + 2).flatMap(UnattributedReason.init(rawValue:)).map { .unattributed($0) } ?? .attributed
        var presentation: PresentationFact?
        if let offerId = row.text(offset + 3) {
            let offer = Offer(
                affiliateToken: row.text(offset + 5), campaignToken: row.text(offset + 6),
                messageIdentifier: row.text(offset + 7), itemID: row.text(offset + 8))
            presentation = PresentationFact(id: offerId, ts: row.int64(offset + 4), offer: offer, eligible: true)
        }
        return Conversion(
            id: row.text(offset) ?? "", ts: row.int64(offset + 1), status: status, presentation: presentation)
    }

    /// The columns `conversion(from:)` reads.
    static let conversionColumns =
        "id, ts, reason, offer_id, presented_at, affiliate_token, campaign_token, message_identifier, item_id"
}
