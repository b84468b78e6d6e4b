import OfferTrackDomain
import SQLite

/// Reading journaled records back as domain `Record`s, for attribution.
package enum RecordQueries {
    /// The columns `record(from:)` expects, in order (after any leading columns at `offset`).
    package static let columns =
        "id, type, ts, decision, subscribed, loaded, offer_id, affiliate_token, campaign_token, "
        + "message_identifier, item_id, review_conversion, review_decision, review_reason, review_note"

    /// One user's records, in no particular order.
    static func records(of user: String, on connection: Connection) throws -> [Record] {
        guard let key = try UserKeys.existingKey(of: user, on: connection) else { return [] }
        return try records(of: user, key: key, on: connection)
    }

    /// The records of the user whose key (`UserKeys`) is `key`, named `user`, in no particular order: those the
    /// per-user index lists in either level.
    package static func records(of user: String, key: Int64, on connection: Connection) throws -> [Record] {
        try records(of: user, key: key, limit: -1, on: connection)
    }

    /// Like `records(of:key:)`, at most `limit` of them (all when negative).
    static func records(of user: String, key: Int64, limit: Int, on connection: Connection) throws -> [Record] {
        try records(of: user, key: key, limit: limit, splitBefore: 0, on: connection).all
    }

    /// Like `records(of:key:)`, at most `limit` of them (all when negative), and apart the ones journaled before
    /// `seq` (a batch's first: the user's records before the batch).
    package static func records(
        of user: String, key: Int64, limit: Int, splitBefore seq: Int64, on connection: Connection
    ) throws -> (all: [Record], earlier: [Record]) {
        // Every level holds each entry's record body (schema 15): no `records` row is read.
        let statement = try connection.prepare(
            static: """
                SELECT kind, ts, body, seq FROM by_user_sealed WHERE k = ?1
                UNION ALL SELECT kind, ts, body, seq FROM by_user WHERE k = ?1
                UNION ALL SELECT kind, ts, body, seq FROM by_user_recent WHERE k = ?1
                LIMIT ?2
                """)
        try statement.bind(key, at: 1)
        try statement.bind(Int64(limit), at: 2)
        defer { statement.reset() }
        var all: [Record] = []
        var earlier: [Record] = []
        while try statement.step() {
            guard let record = indexed(from: statement, user: user, offset: 0) else { continue }
            all.append(record)
            if statement.int64(3) < seq { earlier.append(record) }
        }
        return (all, earlier)
    }

    /// The highest `seq` journaled (0 when empty), or given before a split took the records that had it out
    /// (`seqFloorKey`): a `seq` is never given twice.
    package static let seqFloorKey = MetaKey<Int64>("records_seq_floor")

    package static func lastSeq(on connection: Connection) throws -> Int64 {
        let statement = try connection.prepare(
            static: """
                SELECT max(coalesce((SELECT max(seq) FROM records), 0),
                    coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'records_seq_floor'), 0))
                """)
        defer { statement.reset() }
        return try statement.step() ? statement.int64(0) : 0
    }

    /// Every user's records, one user at a time, in user order (`body` gets each user and their records).
    package static func forEachUser(on connection: Connection, _ body: (String, [Record]) throws -> Void) throws {
        _ = try readUsers(after: nil, on: connection) { user, records in
            try body(user, records)
            return true
        }
    }

    /// Like `forEachUser`, from the first user after `user` (in the journal's byte order) when given; `body`
    /// returns false to stop after that user. The result is whether every user was read.
    ///
    /// The recent level of the per-user index (a few batches' entries) is read first, in user order; the main and
    /// sealed levels are then read user by user, and merged with it, so a user listed in any of them is read once
    /// with all of their records.
    package static func readUsers(
        after user: String?, on connection: Connection, _ body: (String, [Record]) throws -> Bool
    ) throws -> Bool {
        var recent: [(user: String, records: [Record])] = []
        _ = try readLevel(.recent, after: user, on: connection) { user, records in
            recent.append((user, records))
            return true
        }
        var next = 0
        // Hands `body` the users only the recent level lists, up to `user` (every one left when nil); false
        // when `body` asked to stop.
        func recentOnly(before user: String?) throws -> Bool {
            while next < recent.count, user.map({ recent[next].user.utf8.lexicographicallyPrecedes($0.utf8) }) ?? true {
                next += 1
                guard try body(recent[next - 1].user, recent[next - 1].records) else { return false }
            }
            return true
        }
        var stoppedBefore = false
        var stoppedAt = false
        let mainEnded = try readLevel(.main, after: user, on: connection) { user, records in
            guard try recentOnly(before: user) else {
                stoppedBefore = true
                return false
            }
            var all = records
            if next < recent.count, recent[next].user.utf8.elementsEqual(user.utf8) {
                all += recent[next].records
                next += 1
            }
            guard try body(user, all) else {
                stoppedAt = true
                return false
            }
            return true
        }
        if stoppedBefore { return false }
        if stoppedAt { return mainEnded && next == recent.count }
        return try recentOnly(before: nil) || next == recent.count
    }

    /// The reads of `readLevel`: the recent level alone, or the main and sealed levels merged by user (each arm
    /// walks the users' name index in order, and SQLite merges the two).
    private static let recentLevelRead =
        "SELECT u.user, b.kind, b.ts, b.body FROM users u JOIN by_user_recent b ON b.k = u.k WHERE u.user > ?1 "
        + "ORDER BY u.user"
    private static let mainLevelsRead = """
        SELECT u.user, b.kind, b.ts, b.body FROM users u JOIN by_user b ON b.k = u.k WHERE u.user > ?1
        UNION ALL
        SELECT u.user, b.kind, b.ts, b.body FROM users u JOIN by_user_sealed b ON b.k = u.k WHERE u.user > ?1
        ORDER BY 1
        """

    /// Every user the recent level of the per-user index (or the main and sealed levels, `.main`) lists after
    /// `user`, in user order, with the records it lists for them: always a range on the users' name index, which
    /// makes SQLite walk users in name order (outer loop) instead of scanning the index and sorting every record.
    /// Users are never empty (SPEC 3), so "" starts before the first. Returns false when `body` stopped it before
    /// its last user.
    private static func readLevel(
        _ level: UserIndexLevel, after user: String?, on connection: Connection,
        _ body: (String, [Record]) throws -> Bool
    ) throws -> Bool {
        let statement = try connection.prepare(level == .recent ? recentLevelRead : mainLevelsRead)
        try statement.bind(user ?? "", at: 1)
        defer { statement.reset() }
        var currentUser: String?
        var records: [Record] = []
        while try statement.step() {
            let user = statement.text(0) ?? ""
            if let current = currentUser, !current.utf8.elementsEqual(user.utf8) {
                guard try body(current, records) else { return false }
                records.removeAll(keepingCapacity: true)
            }
            currentUser = user
            if let record = indexed(from: statement, user: user, offset: 1) { records.append(record) }
        }
        if let currentUser { _ = try body(currentUser, records) }
        return true
    }

    /// Binds `record`'s `columns`, in their order, to the parameters from `first` on; those its body does not
    /// have are left unbound (NULL). The inverse of `record(from:user:offset:)`.
    package static func bindColumns(of record: Record, to statement: Statement, from first: Int32) throws {
        try statement.bind(record.id, at: first)
        try statement.bind(RecordColumnCodes.typeCode(record.type), at: first + 1)
        try statement.bind(record.ts, at: first + 2)
        switch record.body {
        case .capabilities(let decision):
            try statement.bind(RecordColumnCodes.decisionCode(decision), at: first + 3)
        case .presented(let offer, let loaded):
            try statement.bind(loaded ? 1 : 0, at: first + 5)
            try statement.bind(offer.affiliateToken, at: first + 7)
            try statement.bind(offer.campaignToken, at: first + 8)
            try statement.bind(offer.messageIdentifier, at: first + 9)
            try statement.bind(offer.itemID, at: first + 10)
        case .outcome(let subscribed, let decision, let offerId):
            try statement.bind(decision.map(RecordColumnCodes.decisionCode), at: first + 3)
            try statement.bind(subscribed ? 1 : 0, at: first + 4)
            try statement.bind(offerId, at: first + 6)
        case .review(let review):
            try statement.bind(review.conversion, at: first + 11)
            try statement.bind(RecordColumnCodes.reviewDecisionCode(review.decision), at: first + 12)
            try statement.bind(review.reason?.rawValue, at: first + 13)
            try statement.bind(review.note, at: first + 14)
        case .erasure(let ticket):
            // An erasure's ticket is kept in the note column (schema 12).
            try statement.bind(ticket, at: first + 14)
        }
    }

    /// Decodes the per-user index entry whose `kind, ts, body` start at column `offset`.
    package static func indexed(from row: Statement, user: String, offset: Int32) -> Record? {
        let kind = row.int64(offset)
        let ts = row.int64(offset + 1)
        return row.withBytes(offset + 2) { IndexedRecordBody.record(kind: kind, ts: ts, user: user, body: $0) }
    }

    /// Decodes one row of `columns` starting at column `offset`.
    package static func record(from row: Statement, user: String, offset: Int32) -> Record? {
        let id = row.text(offset) ?? ""
        let ts = row.int64(offset + 2)
        let body: RecordBody
        switch RecordColumnCodes.type(code: row.int64(offset + 1)) {
        case .capabilities:
            guard let decision = RecordColumnCodes.decision(code: row.int64(offset + 3)) else { return nil }
            body = .capabilities(decision)
        case .offerPresented:
            let offer = Offer(
                affiliateToken: row.text(offset + 7), campaignToken: row.text(offset + 8),
                messageIdentifier: row.text(offset + 9), itemID: row.text(offset + 10))
            body = .presented(offer, loaded: row.int64(offset + 5) == 1)
        case .subscriptionOutcome:
            let decision = row.isNull(offset + 3) ? nil : RecordColumnCodes.decision(code: row.int64(offset + 3))
            body = .outcome(subscribed: row.int64(offset + 4) == 1, decision: decision, offerId: row.text(offset + 6))
        case .review:
            guard let conversion = row.text(offset + 11),
                let decision = RecordColumnCodes.reviewDecision(code: row.int64(offset + 12))
            else { return nil }
            let reason = row.text(offset + 13).flatMap(ReviewReason.init(rawValue:))
            body = .review(
                Review(conversion: conversion, decision: decision, reason: reason, note: row.text(offset + 14)))
        case .erasure:
            // An erasure's ticket is kept in the note column (schema 12).
            body = .erasure(ticket: row.text(offset + 14) ?? "")
        case nil:
            return nil
        }
        return Record(id: id, ts: ts, user: user, body: body)
    }
}
