import AttributionJoin
import JournalStore
import OfferTrackDomain
import PublishedLedger
import SQLite

/// `offertrack verify`: the journal's integrity and the derived tables' invariants.
public enum JournalVerifier {
    /// One check and its verdict.
    public struct Check: Sendable {
        public let name: String
        public let problems: [String]
        /// Why the check did not apply to this journal (it then passes), or nil when it ran.
        public var skipped: String? = nil
        public var passed: Bool { problems.isEmpty }

        /// A check named `name` that found `problems` (none: passed).
        public init(name: String, problems: [String], skipped: String? = nil) {
            self.name = name
            self.problems = problems
            self.skipped = skipped
        }
    }

    /// Runs every check in one snapshot.
    public static func verify(_ reader: ReadOnlyJournal) throws -> [Check] {
        let connection = reader.connection
        try connection.execute("BEGIN")
        defer { connection.rollbackIfActive() }
        var checks: [Check] = []
        // Records of sealed days that sealing keeps are their index entries alone (schema 17): the checks that trace
        // rows to `records` accept those before `sealedBefore`, and `SealedDaysVerifier` checks them.
        let sealedBefore = try SealState.read(on: connection)?.sealedBefore ?? .min
        let integrity = try connection.scalarText("PRAGMA integrity_check") ?? "no answer"
        checks.append(Check(name: "integrity_check", problems: integrity == "ok" ? [] : [integrity]))
        checks.append(
            Check(
                name: "derived presentations trace to loaded offer.presented records",
                problems: try ids(
                    connection,
                    """
                    SELECT coalesce(r.id, 'with seq ' || d.seq) FROM derived_presentations d
                    LEFT JOIN records r ON r.seq = d.seq
                    WHERE r.seq IS NULL OR r.type != 1 OR r.loaded != 1 OR r.ts != d.ts
                    """)))
        checks.append(
            Check(
                name: "derived conversions trace to subscribed outcomes (and their offers) of the same user",
                problems: try ids(
                    connection,
                    """
                    SELECT d.id FROM derived_conversions d LEFT JOIN users u ON u.k = d.k
                    LEFT JOIN records r ON r.id = d.id LEFT JOIN records p ON p.id = d.offer_id
                    WHERE u.k IS NULL OR (r.id IS NULL AND d.ts >= \(sealedBefore))
                       OR (r.id IS NOT NULL AND (r.type != 2 OR r.subscribed != 1 OR r.user != u.user OR r.ts != d.ts))
                       OR (d.offer_id IS NOT NULL AND (
                           (p.id IS NULL AND d.presented_at >= \(sealedBefore))
                           OR (p.id IS NOT NULL AND (p.type != 1 OR p.user != u.user))))
                    """)))
        checks.append(try perUserIndexCheck(connection, sealedBefore: sealedBefore))
        checks.append(try ErasureCheck.check(connection))
        checks.append(
            Check(
                name: "lapses are lapse records of the same user within the holding period (rule 4.6)",
                problems: try lapseProblems(connection, sealedBefore: sealedBefore)))
        let extraConversions =
            try connection.scalarInt("SELECT count(*) - count(DISTINCT k) FROM derived_conversions") ?? 0
        checks.append(
            Check(
                name: "at most one conversion per user",
                problems: extraConversions == 0 ? [] : ["\(extraConversions) users with more than one conversion"]))
        checks.append(try recomputationCheck(connection, sealedBefore: sealedBefore))
        checks.append(try rollupCheck(connection))
        checks.append(try publishedDaysCheck(connection))
        checks += try SealedDaysVerifier.checks(connection)
        return checks
    }

    /// Every published export day's CSV, read back as re-exports and payouts read it (since schema 9 from its
    /// run's parts), hashes to the `sha256` its manifest states.
    private static func publishedDaysCheck(_ connection: Connection) throws -> Check {
        var problems: [String] = []
        for day in try connection.allTexts("SELECT day FROM published_days ORDER BY day") {
            guard let files = try PublishedDays.files(of: day, on: connection) else { continue }
            let key = Array(#""sha256":""#.utf8)
            let manifest = files.manifest
            let start = manifest.indices.first { manifest[$0...].starts(with: key) }.map { $0 + key.count }
            let stated = start.map { String(decoding: manifest[$0..<min(manifest.count, $0 + 64)], as: UTF8.self) }
            if stated != SHA256.hex(of: files.csv) {
                problems.append("\(day): its CSV does not hash to its manifest's sha256")
            }
        }
        return Check(name: "published export days read back as their manifests state (sha256)", problems: problems)
    }

    /// The per-user index (schema 8, in levels since 10: `UserIndexLevel`) lists every record exactly once, under its
    /// own user's key and time: as many entries in all levels as records, none in two, and none that names a missing
    /// record, a missing key, another user's key or another kind of record, or whose body (schema 15,
    /// `IndexedRecordBody`) is not its record's. Entries of sealed days without a record are what sealing kept
    /// (`SealedDaysVerifier`); the sealed level holds no other.
    private static func perUserIndexCheck(_ connection: Connection, sealedBefore: Int64) throws -> Check {
        var problems: [String] = []
        var kept: Int64 = 0
        for level in UserIndexLevel.allCases.map(\.table) {
            let rowInSealedLevel = level == UserIndexLevel.sealed.table ? "OR r.seq IS NOT NULL" : ""
            problems += try ids(
                connection,
                """
                SELECT b.seq || ' (per-user index entry under key ' || b.k || ' at ' || b.ts || ' in \(level))'
                FROM \(level) b LEFT JOIN records r ON r.seq = b.seq LEFT JOIN users u ON u.k = b.k
                WHERE (r.seq IS NULL AND (b.ts >= \(sealedBefore) OR b.kind > 5)) OR u.k IS NULL \(rowInSealedLevel)
                    OR (r.seq IS NOT NULL AND (r.user != u.user OR r.ts != b.ts
                        OR b.kind != \(UserIndexKind.sql) OR \(UserIndexColumns.differsFromRecord)))
                """)
            kept +=
                try connection.scalarInt(
                    "SELECT count(*) FROM \(level) b WHERE NOT EXISTS (SELECT 1 FROM records r WHERE r.seq = b.seq)")
                ?? 0
        }
        for (one, other) in [
            ("by_user", "by_user_recent"), ("by_user", "by_user_sealed"), ("by_user_recent", "by_user_sealed"),
        ] {
            problems += try ids(
                connection,
                """
                SELECT b.seq || ' (listed in two levels of the per-user index, \(one) and \(other))' FROM \(one) b
                JOIN \(other) n ON n.k = b.k AND n.kind = b.kind AND n.ts = b.ts AND n.seq = b.seq
                """)
        }
        let records = try connection.scalarInt("SELECT count(*) FROM records") ?? 0
        let entries =
            try connection.scalarInt(
                """
                SELECT (SELECT count(*) FROM by_user) + (SELECT count(*) FROM by_user_recent)
                    + (SELECT count(*) FROM by_user_sealed)
                """) ?? 0
        if records + kept != entries {
            problems.append("\(records) records and \(kept) kept by sealing, \(entries) per-user index entries")
        }
        return Check(name: "the per-user index lists every record once, under its user", problems: problems)
    }

    /// Every named lapse is a lapse record of the conversion's user, after it and at most H after it, and only
    /// attributed conversions name one.
    private static func lapseProblems(_ connection: Connection, sealedBefore: Int64) throws -> [String] {
        guard let settings = try DerivedTables.settings(on: connection) else { return [] }
        let statement = try connection.prepare(
            """
            SELECT d.id FROM derived_conversions d LEFT JOIN users u ON u.k = d.k
            LEFT JOIN records l ON l.id = d.lapse_id
            WHERE d.lapse_id IS NOT NULL AND (d.reason IS NOT NULL OR u.k IS NULL
                OR d.lapse_ts <= d.ts OR d.lapse_ts - d.ts > ?1
                OR (l.id IS NULL AND d.lapse_ts >= ?4)
                OR (l.id IS NOT NULL AND (l.user != u.user OR l.ts != d.lapse_ts
                    OR NOT ((l.type = 0 AND l.decision IN (?2, ?3)) OR (l.type = 2 AND l.subscribed = 0)))))
            LIMIT 20
            """)
        try statement.bind(settings.holdingMs, at: 1)
        try statement.bind(RecordColumnCodes.decisionCode(.eligible), at: 2)
        try statement.bind(RecordColumnCodes.decisionCode(.ineligible), at: 3)
        try statement.bind(sealedBefore, at: 4)
        defer { statement.reset() }
        var found: [String] = []
        while try statement.step() { found.append("conversion \(statement.text(0) ?? "?") names a wrong lapse") }
        return found
    }

    /// The daily roll-ups equal the derived rows aggregated by day and group.
    private static func rollupCheck(_ connection: Connection) throws -> Check {
        let day = DayRollup.daySQL
        let presentations = """
            SELECT day, dimension, value, presented, eligible
            FROM presentation_rollup WHERE presented != 0 OR eligible != 0
            """
        let presentationsFromRows = DayRollup.presentationRollupFromRows
        let conversions = """
            SELECT day, attributed, lapsed, review, affiliate_token, campaign_token, message_identifier, conversions
            FROM conversion_days WHERE conversions != 0
            """
        let conversionsFromRows = """
            SELECT \(day), reason IS NULL, reason IS NULL AND lapse_id IS NOT NULL,
                CASE WHEN reason IS NULL AND lapse_id IS NULL THEN coalesce(review_decision, 0) ELSE 0 END,
                CASE WHEN reason IS NULL THEN coalesce(affiliate_token, '') ELSE '' END,
                CASE WHEN reason IS NULL THEN coalesce(campaign_token, '') ELSE '' END,
                CASE WHEN reason IS NULL THEN coalesce(message_identifier, '') ELSE '' END,
                count(*) FROM derived_conversions GROUP BY 1, 2, 3, 4, 5, 6, 7
            """
        var problems: [String] = []
        for (name, a, b) in [
            ("presentation_rollup", presentations, presentationsFromRows),
            ("conversion_days", conversions, conversionsFromRows),
        ] {
            let missing = try connection.scalarInt(Self.countExcept(b, a)) ?? 0
            let extra = try connection.scalarInt(Self.countExcept(a, b)) ?? 0
            let differing = missing + extra
            if differing != 0 { problems.append("\(name): \(differing) groups differ from the derived rows") }
        }
        return Check(name: "daily roll-ups equal the derived rows", problems: problems)
    }

    /// SQL counting the rows of query `a` missing from query `b` (each may be a compound SELECT).
    private static func countExcept(_ a: String, _ b: String) -> String {
        "SELECT count(*) FROM (SELECT * FROM (\(a)) EXCEPT SELECT * FROM (\(b)))"
    }

    private static func ids(_ connection: Connection, _ sql: String) throws -> [String] {
        let statement = try connection.prepare(sql + " LIMIT 20")
        defer { statement.reset() }
        var found: [String] = []
        while try statement.step() { found.append("record \(statement.text(0) ?? "?")") }
        return found
    }

    /// The derived tables equal attribution recomputed from scratch under the windows they record.
    private static func recomputationCheck(_ connection: Connection, sealedBefore: Int64) throws -> Check {
        let name = "derived tables equal a fresh recomputation"
        guard let settings = try DerivedTables.settings(on: connection) else {
            // An edge's (or a `--journal-only`) journal keeps no attribution: there is nothing to compare, and every
            // report recomputes from the journal itself. The records' own checks above still ran.
            return Check(
                name: name, problems: [],
                skipped: "the derived tables were never computed (an edge's or --journal-only journal; "
                    + "reports recompute from the journal; a normal start or `offertrack rebuild` computes them)")
        }
        // Presentations that sealing kept as index entries alone have no row: their days' counts are sealed.
        let sealedWithRecord = Set(
            try connection.allTexts(
                "SELECT id FROM records WHERE type = 1 AND loaded = 1 AND ts < \(sealedBefore)"
            ).map(ExactString.init))
        var expected: [String] = []
        try RecordQueries.forEachUser(on: connection) { user, records in
            let attribution = Attribution.attribute(userRecords: records, settings: settings)
            for fact in attribution.presentations
            where fact.ts >= sealedBefore || sealedWithRecord.contains(ExactString(fact.id)) {
                expected.append(
                    presentationRow(
                        user: user, fact.id, fact.ts, fact.offer.affiliateToken, fact.offer.campaignToken,
                        fact.offer.effectiveMessageIdentifier, fact.offer.itemID, fact.eligible))
            }
            if let conversion = attribution.conversion {
                var reason: String?
                if case .unattributed(let why) = conversion.status { reason = why.rawValue }
                let offer = conversion.presentation?.offer
                expected.append(
                    conversionRow(
                        user: user, conversion.id, conversion.ts, reason, conversion.presentation?.id,
                        conversion.presentation?.ts, offer?.affiliateToken, offer?.campaignToken,
                        offer?.effectiveMessageIdentifier, offer?.itemID, conversion.lapse, conversion.review))
            }
        }
        var actual: [String] = []
        let presentations = try connection.prepare(
            """
            SELECT r.user, r.id, d.ts, r.affiliate_token, r.campaign_token, coalesce(r.message_identifier, 'join'),
                r.item_id, d.eligible
            FROM derived_presentations d LEFT JOIN records r ON r.seq = d.seq
            """)
        defer { presentations.reset() }
        while try presentations.step() {
            let p = presentations
            actual.append(
                presentationRow(
                    user: p.text(0) ?? "", p.text(1) ?? "", p.int64(2), p.text(3), p.text(4), p.text(5) ?? "",
                    p.text(6), p.int64(7) == 1))
        }
        let conversions = try connection.prepare(
            "SELECT u.user, \(DerivedTables.conversionColumns) FROM derived_conversions JOIN users u USING (k)")
        defer { conversions.reset() }
        while try conversions.step() {
            let c = conversions
            actual.append(
                conversionRow(
                    user: c.text(0) ?? "", c.text(1) ?? "", c.int64(2), c.text(3), c.text(4),
                    c.isNull(5) ? nil : c.int64(5), c.text(6), c.text(7), c.text(8), c.text(9),
                    c.text(10).map { RecordReference(id: $0, ts: c.int64(11)) },
                    DerivedTables.conversion(from: c, offset: 1).review))
        }
        let expectedSet = Set(expected.map(ExactString.init))
        let actualSet = Set(actual.map(ExactString.init))
        var problems: [String] = []
        if expected.count != actual.count {
            problems.append("\(actual.count) derived rows, a recomputation gives \(expected.count)")
        }
        for row in expectedSet.subtracting(actualSet).prefix(10) {
            problems.append("missing: \(row.value)")
        }
        for row in actualSet.subtracting(expectedSet).prefix(10) {
            problems.append("unexpected: \(row.value)")
        }
        return Check(name: name, problems: problems)
    }

    private static func presentationRow(
        user: String, _ id: String, _ ts: Int64, _ affiliate: String?, _ campaign: String?, _ message: String,
        _ item: String?, _ eligible: Bool
    ) -> String {
        "presentation user=\(user) id=\(id) ts=\(ts) affiliate=\(affiliate ?? "\u{1}") campaign=\(campaign ?? "\u{1}") "
            + "message=\(message) item=\(item ?? "\u{1}") eligible=\(eligible)"
    }

    private static func conversionRow(
        user: String, _ id: String, _ ts: Int64, _ reason: String?, _ offerId: String?, _ presentedAt: Int64?,
        _ affiliate: String?, _ campaign: String?, _ message: String?, _ item: String?, _ lapse: RecordReference?,
        _ review: ConversionReview?
    ) -> String {
        "conversion user=\(user) id=\(id) ts=\(ts) reason=\(reason ?? "attributed") offer=\(offerId ?? "\u{1}") "
            + "presented=\(presentedAt.map(String.init) ?? "\u{1}") affiliate=\(affiliate ?? "\u{1}") "
            + "campaign=\(campaign ?? "\u{1}") message=\(message ?? "\u{1}") item=\(item ?? "\u{1}") "
            + "lapse=\(lapse.map { "\($0.id)@\($0.ts)" } ?? "\u{1}") "
            + "review=\(review.map { "\($0.record.id)@\($0.record.ts):\($0.decision.rawValue):\($0.reason?.rawValue ?? "")" } ?? "\u{1}")"
    }
}

extension JournalVerifier {
    /// For several journals read as one (SPEC section 10): no user has records in more than one of them. Each
    /// journal's users are read in index order and merged, so memory stays small whatever their number.
    public static func usersAreDisjoint(_ readers: [ReadOnlyJournal]) throws -> Check {
        let name = "every user's records are in one journal"
        let statements = try readers.map {
            try $0.connection.prepare("SELECT user FROM users ORDER BY user")
        }
        defer { statements.forEach { $0.reset() } }
        var heads: [[UInt8]?] = try statements.map { try $0.step() ? $0.bytes(0) : nil }
        var problems: [String] = []
        while problems.count < 10 {
            guard let smallest = heads.compactMap({ $0 }).min(by: { $0.lexicographicallyPrecedes($1) }) else { break }
            let holders = heads.indices.filter { heads[$0] == smallest }
            if holders.count > 1 {
                problems.append(
                    "user \(String(decoding: smallest, as: UTF8.self)) is in "
                        + holders.map { readers[$0].path }.joined(separator: " and "))
            }
            for index in holders { heads[index] = try statements[index].step() ? statements[index].bytes(0) : nil }
        }
        return Check(name: name, problems: problems)
    }
}
