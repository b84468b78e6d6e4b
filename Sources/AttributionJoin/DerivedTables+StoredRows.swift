import JournalStore
import OfferTrackDomain
import SQLite

/// Reading and rewriting single derived rows, for the bounded refresh (`BoundedRefresh`) and a merge of two
/// users (`ErasureRenames`).
extension DerivedTables {
    /// A derived presentation's stored verdict (rule 4.4); nil when it has no row.
    static func storedEligibility(
        ts: Int64, seq: Int64, tables: DerivedTableSet, on connection: Connection
    ) throws -> Bool? {
        let select = try tables.prepare(
            "SELECT eligible FROM derived_presentations WHERE ts = ?1 AND seq = ?2", on: connection)
        try select.bind(ts, at: 1)
        try select.bind(seq, at: 2)
        defer { select.reset() }
        return try select.step() ? select.int64(0) != 0 : nil
    }

    /// Writes a derived presentation's verdict, over its row when `replacing`.
    static func storeEligibility(
        _ fact: PresentationFact, seq: Int64, replacing: Bool, tables: DerivedTableSet, on connection: Connection
    ) throws {
        guard replacing else {
            try insertPresentation(fact, seq: seq, tables: tables, on: connection)
            return
        }
        let update = try tables.prepare(
            "UPDATE derived_presentations SET eligible = ?3 WHERE ts = ?1 AND seq = ?2", on: connection)
        try update.bind(fact.ts, at: 1)
        try update.bind(seq, at: 2)
        try update.bind(fact.eligible ? 1 : 0, at: 3)
        try update.run()
    }

    /// The derived conversion whose outcome is `(ts, id)`; nil when it has no row.
    static func storedConversion(
        ts: Int64, id: String, tables: DerivedTableSet, on connection: Connection
    ) throws -> Conversion? {
        let select = try tables.prepare(
            """
            SELECT id, ts, reason, offer_id, presented_at, affiliate_token, campaign_token, message_identifier,
                item_id, lapse_id, lapse_ts, review_id, review_ts, review_decision, review_reason
            FROM derived_conversions WHERE ts = ?1 AND id = ?2
            """, on: connection)
        try select.bind(ts, at: 1)
        try select.bind(id, at: 2)
        defer { select.reset() }
        return try select.step() ? conversion(from: select) : nil
    }

    /// Recomputes one user's rows from all of their records, after another user's records were merged under
    /// their key (`ErasureRenames`): every stored row of both keys is taken out of the roll-ups and dropped, and
    /// the user's attribution put in.
    static func recompute(
        user: String, key: Int64, formerKey: Int64, settings: AttributionSettings, rollup: inout DayRollup,
        tables: DerivedTableSet = .live, on connection: Connection
    ) throws {
        try dropRows(user: user, key: key, formerKey: formerKey, rollup: &rollup, tables: tables, on: connection)
        try insertRows(user: user, key: key, settings: settings, rollup: &rollup, tables: tables, on: connection)
    }

    /// Drops every stored row of keys `key` and `formerKey` (the same key twice for one user), taking them out of
    /// the roll-ups; presentations are found through the per-user index, so this comes before any of the user's
    /// entries leave it (`JournalSealer`).
    package static func dropRows(
        user: String, key: Int64, formerKey: Int64, rollup: inout DayRollup, tables: DerivedTableSet = .live,
        on connection: Connection
    ) throws {
        // One user's conversion is found through the per-user index (its `subscribed` outcome's `ts`), as the
        // presentations are below: `derived_conversions` has no index on `k`, and scanning it for each user made a
        // seal of a day of 1,000,000 records take hours. A merge of two keys still reads both keys' rows by `k`.
        let conversions = try tables.prepare(
            key == formerKey
                ? """
                SELECT id, ts, reason, offer_id, presented_at, affiliate_token, campaign_token, message_identifier,
                    item_id, lapse_id, lapse_ts, review_id, review_ts, review_decision, review_reason
                FROM derived_conversions WHERE k = ?1 AND ts IN (
                    SELECT ts FROM by_user WHERE k = ?1 AND kind = 4
                    UNION ALL SELECT ts FROM by_user_recent WHERE k = ?1 AND kind = 4
                    UNION ALL SELECT ts FROM by_user_sealed WHERE k = ?1 AND kind = 4)
                """
                : """
                SELECT id, ts, reason, offer_id, presented_at, affiliate_token, campaign_token, message_identifier,
                    item_id, lapse_id, lapse_ts, review_id, review_ts, review_decision, review_reason
                FROM derived_conversions WHERE k = ?1 OR k = ?2
                """, on: connection)
        try conversions.bind(key, at: 1)
        if key != formerKey { try conversions.bind(formerKey, at: 2) }
        var stored: [Conversion] = []
        while try conversions.step() { stored.append(conversion(from: conversions)) }
        conversions.reset()
        for old in stored {
            try delete(conversion: old, tables: tables, on: connection)
            rollup.count(old, sign: -1)
        }
        let presentations = try tables.prepare(
            """
            SELECT d.ts, d.seq, d.eligible, b.body
            FROM (SELECT ts, seq, body FROM by_user WHERE k = ?1 AND kind = 2
                UNION ALL SELECT ts, seq, body FROM by_user_recent WHERE k = ?1 AND kind = 2) b
            JOIN derived_presentations d ON d.ts = b.ts AND d.seq = b.seq
            """, on: connection)
        try presentations.bind(key, at: 1)
        var facts: [(fact: PresentationFact, seq: Int64)] = []
        while try presentations.step() {
            let row = presentations
            let kind = UserIndexKind.loadedPresentation.rawValue
            let ts = row.int64(0)
            guard
                let record = row.withBytes(3, { IndexedRecordBody.record(kind: kind, ts: ts, user: user, body: $0) }),
                case .presented(let offer, _) = record.body
            else { continue }
            facts.append(
                (
                    PresentationFact(id: record.id, ts: row.int64(0), offer: offer, eligible: row.int64(2) != 0),
                    row.int64(1)
                ))
        }
        presentations.reset()
        let drop = try tables.prepare("DELETE FROM derived_presentations WHERE ts = ?1 AND seq = ?2", on: connection)
        for (fact, seq) in facts {
            try drop.bind(fact.ts, at: 1)
            try drop.bind(seq, at: 2)
            try drop.run()
            rollup.count(fact, sign: -1)
        }
    }

    /// Inserts the user's rows from attribution over all of their records, counting them in the roll-ups.
    package static func insertRows(
        user: String, key: Int64, settings: AttributionSettings, rollup: inout DayRollup,
        tables: DerivedTableSet = .live, on connection: Connection
    ) throws {
        let attribution = Attribution.attribute(
            userRecords: try RecordQueries.records(of: user, key: key, on: connection), settings: settings)
        try insert(user: user, attribution, into: &rollup, tables: tables, on: connection)
    }
}
