import JournalStore
import OfferTrackDomain
import SQLite

/// Attribution's derived tables: each user's loaded presentations (with rule 4.4's verdict) and conversion.
///
/// They are a cache of `Attribution.attribute` over the journal, keyed by user: whenever a user's records change,
/// that user's rows are recomputed from all of their records, so the tables always equal a recomputation from
/// scratch under the windows recorded in `meta`.
package enum DerivedTables {
    /// Users with at most this many records are refreshed from their whole history, longer ones by lookups.
    static let defaultHistoryLimit = JournalWriter.defaultHistoryLimit
    static let windowKey = "derived_window_ms"
    static let freshnessKey = "derived_freshness_ms"
    static let holdingKey = "derived_holding_ms"

    /// The shared users (rule 4.0) they were computed with, one per line (a `user` has no control characters);
    /// absent on tables computed before rule 4.0, which is computing with none.
    static let sharedUsersKey = "derived_shared_users"

    /// The settings the derived tables were computed with; nil when they never were.
    package static func settings(on connection: Connection) throws -> AttributionSettings? {
        var memo = SharedUsersMemo()
        return try settings(on: connection, memo: &memo)
    }

    /// The last shared-users list `settings` parsed, as stored and as parsed: the writer reads the settings for
    /// every batch, and splitting and hashing the list again cost more than the rest of a small batch's set-up.
    struct SharedUsersMemo {
        private var stored: String?
        private var parsed = SharedUsers.none

        /// `stored`'s list: the last one if it is stored the same.
        mutating func parse(_ stored: String) -> SharedUsers {
            if let last = self.stored, ExactString.equals(last, stored) { return parsed }
            parsed = SharedUsers(
                stored.isEmpty ? [] : stored.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
            self.stored = stored
            return parsed
        }
    }

    /// As `settings(on:)`, the shared-users list parsed through `memo`.
    static func settings(on connection: Connection, memo: inout SharedUsersMemo) throws -> AttributionSettings? {
        let statement = try connection.prepare(
            static: "SELECT key, value FROM meta WHERE key IN (?1, ?2, ?3, ?4)")
        try statement.bind(windowKey, at: 1)
        try statement.bind(freshnessKey, at: 2)
        try statement.bind(holdingKey, at: 3)
        try statement.bind(sharedUsersKey, at: 4)
        defer { statement.reset() }
        var values: [String: String] = [:]
        while try statement.step() {
            if let key = statement.text(0), let value = statement.text(1) { values[key] = value }
        }
        guard let window = values[windowKey].flatMap({ Int64($0) }),
            let freshness = values[freshnessKey].flatMap({ Int64($0) }),
            let holding = values[holdingKey].flatMap({ Int64($0) })
        else { return nil }
        let shared = values[sharedUsersKey].map { memo.parse($0) } ?? .none
        return AttributionSettings(windowMs: window, freshnessMs: freshness, holdingMs: holding, sharedUsers: shared)
    }

    /// Recomputes one user's rows after `added` joined their journaled records, and writes only the rows that
    /// changed (and the roll-up groups they count in): usually one new presentation, or nothing.
    ///
    /// `added` are the user's records this batch journaled; `key`, when given, is the user's key (`UserKeys`). A
    /// user with nothing journaled before (most, for in-order traffic) gets all their rows inserted from `added`
    /// alone; `mayHaveEarlier: false` says the caller already knows that, and skips reading the journal.
    ///
    /// Otherwise the rows before are attribution over the user's records without `added`: the derived tables
    /// always equal that (they change only in the transaction that journals records), so nothing is read back.
    ///
    /// Roll-up changes are added to `rollup`, which the caller writes once for the whole batch.
    ///
    /// A user with more than `historyLimit` records is refreshed by lookups instead (`BoundedRefresh`), so the
    /// work stays bounded however long their history is; `batchFirstSeq` is the batch's first `seq`. With
    /// `knownLong` (the last batch found the history long) the history is not read to count it: lookups are
    /// right for a history of any length. `addedSeqs`, when given, are `added`'s `seq`s. Returns whether the
    /// refresh was by lookups, and the user's `UserSummary` with `added` journaled.
    @discardableResult
    static func refresh(
        user: String, key: Int64? = nil, added: [Record], addedSeqs: [Int64]? = nil, mayHaveEarlier: Bool,
        settings: AttributionSettings, rollup: inout DayRollup, tables: DerivedTableSet = .live,
        historyLimit: Int = defaultHistoryLimit, knownLong: Bool = false, batchFirstSeq: Int64,
        on connection: Connection
    ) throws -> (bounded: Bool, summary: UserSummary) {
        // The user's records, this batch's included, read once (no separate probe for earlier ones) up to one
        // more than the limit, by the user's key.
        var records = added
        // The user's records before the batch: every one not in `added` (which are this batch's accepted ones,
        // from `batchFirstSeq` on).
        var earlier: [Record] = []
        if mayHaveEarlier, let key = try key ?? UserKeys.existingKey(of: user, on: connection) {
            if !knownLong {
                (records, earlier) = try RecordQueries.records(
                    of: user, key: key, limit: historyLimit + 1, splitBefore: batchFirstSeq, on: connection)
            }
            if knownLong || records.count > historyLimit {
                let bounded = BoundedRefresh(
                    user: user, key: key, settings: settings, tables: tables, connection: connection,
                    batchFirstSeq: batchFirstSeq)
                let before = try bounded.run(added: added, seqs: addedSeqs, rollup: &rollup)
                return (true, before.adding(added))
            }
        }
        guard !earlier.isEmpty else {
            // Nothing was derived for this user before: every row is new, and attribution needs only `added`.
            let attribution = Attribution.attribute(userRecords: added, settings: settings)
            try insert(user: user, attribution, tables: tables, on: connection)
            count(attribution, sign: 1, into: &rollup)
            return (false, UserSummary.empty.adding(added))
        }
        let now = Attribution.attribute(userRecords: records, settings: settings)
        let before = Attribution.attribute(userRecords: earlier, settings: settings)
        try writeChanges(
            user: user, from: before, to: now, added: added, addedSeqs: addedSeqs, tables: tables, rollup: &rollup,
            on: connection)
        return (false, UserSummary.empty.adding(records))
    }

    /// Writes the rows that differ between a user's attribution `before` and `now` (and the roll-up groups they
    /// count in): usually one new presentation, or nothing. Both list their presentations in journal order, as
    /// `Attribution.attribute` does, so one walk of the two lists pairs them by id.
    ///
    /// `added` and `addedSeqs` (when known) are the batch's records and their `seq`s: a new presentation among them
    /// is inserted by its `seq`, without looking its id up.
    private static func writeChanges(
        user: String, from before: UserAttribution, to now: UserAttribution, added: [Record], addedSeqs: [Int64]?,
        tables: DerivedTableSet, rollup: inout DayRollup, on connection: Connection
    ) throws {
        func seq(of presentation: PresentationFact) -> Int64? {
            guard let addedSeqs else { return nil }
            return added.firstIndex { ExactString.equals($0.id, presentation.id) }.map { addedSeqs[$0] }
        }
        let old = before.presentations
        let new = now.presentations
        var (o, n) = (0, 0)
        while o < old.count || n < new.count {
            let oldFirst =
                n == new.count
                || (o < old.count && RecordOrder.precedes(ts: old[o].ts, id: old[o].id, ts: new[n].ts, id: new[n].id))
            let newFirst =
                o == old.count
                || (n < new.count && RecordOrder.precedes(ts: new[n].ts, id: new[n].id, ts: old[o].ts, id: old[o].id))
            if !oldFirst && !newFirst && old[o].eligible == new[n].eligible {
                // The same presentation, stored the same.
                (o, n) = (o + 1, n + 1)
                continue
            }
            if !newFirst {
                try deletePresentation(old[o], tables: tables, on: connection)
                rollup.count(old[o], sign: -1)
                o += 1
            }
            if !oldFirst {
                try insertPresentation(new[n], seq: seq(of: new[n]), tables: tables, on: connection)
                rollup.count(new[n], sign: 1)
                n += 1
            }
        }
        try replace(
            conversion: before.conversion, with: now.conversion, user: user, tables: tables, rollup: &rollup,
            on: connection)
    }

    /// Replaces a user's conversion row `old` by `new` (either may be nil) unless they store the same columns.
    static func replace(
        conversion old: Conversion?, with new: Conversion?, user: String, tables: DerivedTableSet,
        rollup: inout DayRollup, on connection: Connection
    ) throws {
        guard !storesSame(old, new) else { return }
        if let old {
            try delete(conversion: old, tables: tables, on: connection)
            rollup.count(old, sign: -1)
        }
        if let new {
            try insertConversion(user: user, new, tables: tables, on: connection)
            rollup.count(new, sign: 1)
        }
    }

    /// Replaces everything from scratch (inside the caller's transaction) under `settings`.
    static func rebuild(settings: AttributionSettings, on connection: Connection) throws {
        try Schema.dropRecomputeCopies(on: connection)
        try connection.execute(
            """
            DELETE FROM derived_presentations; DELETE FROM derived_conversions;
            DELETE FROM presentation_rollup; DELETE FROM conversion_days;
            """)
        var rollup = DayRollup()
        try RecordQueries.forEachUser(on: connection) { user, records in
            let attribution = Attribution.attribute(userRecords: records, settings: settings)
            try insert(user: user, attribution, into: &rollup, on: connection)
        }
        try rollup.write(on: connection)
        try store(settings, on: connection)
    }

    /// Inserts a user's rows from `attribution` into `tables` and counts them in `rollup`. Presentations that
    /// sealing kept as index entries alone get no row: their days' counts are sealed (SPEC 12).
    static func insert(
        user: String, _ attribution: UserAttribution, into rollup: inout DayRollup, tables: DerivedTableSet = .live,
        on connection: Connection
    ) throws {
        for fact in attribution.presentations
        where try insertPresentation(fact, seq: nil, tables: tables, on: connection) {
            rollup.count(fact, sign: 1)
        }
        if let conversion = attribution.conversion {
            try insertConversion(user: user, conversion, tables: tables, on: connection)
            rollup.count(conversion, sign: 1)
        }
    }

    /// Records in `meta` that the derived tables follow `settings`.
    static func store(_ settings: AttributionSettings, on connection: Connection) throws {
        let store = try connection.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")
        let values = [
            (windowKey, String(settings.windowMs)), (freshnessKey, String(settings.freshnessMs)),
            (holdingKey, String(settings.holdingMs)),
            (sharedUsersKey, settings.sharedUsers.entries.joined(separator: "\n")),
        ]
        for (key, value) in values {
            try store.bind(key, at: 1)
            try store.bind(value, at: 2)
            try store.run()
        }
    }

    static func count(_ attribution: UserAttribution, sign: Int64, into rollup: inout DayRollup) {
        for fact in attribution.presentations { rollup.count(fact, sign: sign) }
        if let conversion = attribution.conversion { rollup.count(conversion, sign: sign) }
    }

    /// Whether two conversion rows store the same columns, strings compared as exact bytes (nil: no row).
    static func storesSame(_ lhs: Conversion?, _ rhs: Conversion?) -> Bool {
        guard let lhs, let rhs else { return lhs == nil && rhs == nil }
        func same(_ a: String?, _ b: String?) -> Bool {
            guard let a, let b else { return a == nil && b == nil }
            return ExactString.equals(a, b)
        }
        func same(_ a: RecordReference?, _ b: RecordReference?) -> Bool {
            a?.ts == b?.ts && same(a?.id, b?.id)
        }
        let (left, right) = (lhs.presentation, rhs.presentation)
        return lhs.ts == rhs.ts && same(lhs.id, rhs.id) && lhs.status == rhs.status
            && (left == nil) == (right == nil) && left?.ts == right?.ts && same(left?.id, right?.id)
            && same(left?.offer.affiliateToken, right?.offer.affiliateToken)
            && same(left?.offer.campaignToken, right?.offer.campaignToken)
            && same(left?.offer.effectiveMessageIdentifier, right?.offer.effectiveMessageIdentifier)
            && same(left?.offer.itemID, right?.offer.itemID) && same(lhs.lapse, rhs.lapse)
            && same(lhs.review?.record, rhs.review?.record) && lhs.review?.decision == rhs.review?.decision
            && lhs.review?.reason == rhs.review?.reason
    }

    /// Inserts a user's rows. `presentationSeqs`, when given, holds each presentation's journal `seq` where known
    /// (in the order of `attribution.presentations`); the others are looked up by id.
    static func insert(
        user: String, _ attribution: UserAttribution, presentationSeqs: [Int64?]? = nil,
        tables: DerivedTableSet = .live, on connection: Connection
    ) throws {
        for (index, fact) in attribution.presentations.enumerated() {
            try insertPresentation(fact, seq: presentationSeqs?[index] ?? nil, tables: tables, on: connection)
        }
        if let conversion = attribution.conversion {
            try insertConversion(user: user, conversion, tables: tables, on: connection)
        }
    }

    /// A presentation's row: its eligibility, keyed by time and by its record's `seq` (the offer is the
    /// record's own). Without `seq` it is looked up by the presentation's id; a presentation that sealing kept as
    /// its index entry alone gets no row (returns false).
    @discardableResult
    static func insertPresentation(
        _ fact: PresentationFact, seq: Int64?, tables: DerivedTableSet, on connection: Connection
    ) throws -> Bool {
        if let seq {
            let insert = try tables.prepare(
                "INSERT INTO derived_presentations (ts, seq, eligible) VALUES (?1, ?2, ?3)", on: connection)
            try insert.bind(fact.ts, at: 1)
            try insert.bind(seq, at: 2)
            try insert.bind(fact.eligible ? 1 : 0, at: 3)
            try insert.run()
            return true
        }
        let insert = try tables.prepare(
            """
            INSERT INTO derived_presentations (ts, seq, eligible) SELECT ts, seq, ?2 FROM records WHERE id = ?1
            """, on: connection)
        try insert.bind(fact.id, at: 1)
        try insert.bind(fact.eligible ? 1 : 0, at: 2)
        try insert.run()
        guard connection.changes == 1 else {
            if try SealedFacts.isKept(id: fact.id, on: connection) { return false }
            throw SQLiteError(code: 1, message: "presentation \(fact.id) is not journaled", sql: insert.sql)
        }
        return true
    }

    private static func deletePresentation(
        _ fact: PresentationFact, tables: DerivedTableSet, on connection: Connection
    ) throws {
        let delete = try tables.prepare(
            """
            DELETE FROM derived_presentations WHERE ts = ?1 AND seq = (SELECT seq FROM records WHERE id = ?2)
            """, on: connection)
        try delete.bind(fact.ts, at: 1)
        try delete.bind(fact.id, at: 2)
        try delete.run()
    }

    static func delete(conversion: Conversion, tables: DerivedTableSet, on connection: Connection) throws {
        let delete = try tables.prepare("DELETE FROM derived_conversions WHERE ts = ?1 AND id = ?2", on: connection)
        try delete.bind(conversion.ts, at: 1)
        try delete.bind(conversion.id, at: 2)
        try delete.run()
    }

    static func insertConversion(
        user: String, _ conversion: Conversion, tables: DerivedTableSet, on connection: Connection
    ) throws {
        let insert = try tables.prepare(
            """
            INSERT INTO derived_conversions (k, id, ts, reason, offer_id, presented_at, affiliate_token,
                campaign_token, message_identifier, item_id, lapse_id, lapse_ts, review_id, review_ts,
                review_decision, review_reason)
            VALUES ((SELECT k FROM users WHERE user = ?1), ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
            """, on: connection)
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
        if let lapse = conversion.lapse {
            try insert.bind(lapse.id, at: 11)
            try insert.bind(lapse.ts, at: 12)
        }
        if let review = conversion.review {
            try insert.bind(review.record.id, at: 13)
            try insert.bind(review.record.ts, at: 14)
            try insert.bind(RecordColumnCodes.reviewDecisionCode(review.decision), at: 15)
            try insert.bind(review.reason?.rawValue, at: 16)
        }
        try insert.run()
    }

    /// Decodes a `derived_conversions` row selected as `conversionColumns` (from column `offset`).
    package static func conversion(from row: Statement, offset: Int32 = 0) -> Conversion {
        let status: ConversionStatus =
            row.text(offset + 2).flatMap(UnattributedReason.init(rawValue:)).map { .unattributed($0) } ?? .attributed
        var presentation: PresentationFact?
        if let offerId = row.text(offset + 3) {
            let offer = Offer(
                affiliateToken: row.text(offset + 5), campaignToken: row.text(offset + 6),
                messageIdentifier: row.text(offset + 7), itemID: row.text(offset + 8))
            presentation = PresentationFact(id: offerId, ts: row.int64(offset + 4), offer: offer, eligible: true)
        }
        let lapse = row.text(offset + 9).map { RecordReference(id: $0, ts: row.int64(offset + 10)) }
        var review: ConversionReview?
        if let id = row.text(offset + 11), let decision = RecordColumnCodes.reviewDecision(code: row.int64(offset + 13))
        {
            review = ConversionReview(
                record: RecordReference(id: id, ts: row.int64(offset + 12)), decision: decision,
                reason: row.text(offset + 14).flatMap(ReviewReason.init(rawValue:)))
        }
        return Conversion(
            id: row.text(offset) ?? "", ts: row.int64(offset + 1), status: status, presentation: presentation,
            lapse: lapse, review: review)
    }

    /// The columns `conversion(from:)` reads.
    package static let conversionColumns =
        "id, ts, reason, offer_id, presented_at, affiliate_token, campaign_token, message_identifier, item_id, "
        + "lapse_id, lapse_ts, review_id, review_ts, review_decision, review_reason"
}
