import OfferTrackDomain
import SQLite

/// How far sealing (SPEC section 12) got, kept in `meta`: the last sealed day S, the windows it was sealed with
/// (every later rules file must have the same, SPEC 12 "Windows are fixed once sealed"), the acceptance horizon,
/// and the last day whose records were all taken out (`JournalSealer` removes them after S moves, in chunks).
public struct SealState: Sendable, Equatable {
    /// S, a UTC day number.
    public var lastSealedDay: Int64
    /// W and F of the rules the seals were given.
    public var windowMs: Int64
    public var freshnessMs: Int64
    /// A record whose `ts` is before this is `expired` (00:00Z of S + 1 + K, or of a later day while a seal
    /// runs: it moves first).
    public var horizon: Int64
    /// The last day up to which the sealed days' records not kept are all removed.
    public var cleanedThroughDay: Int64

    package static let lastSealedDayKey = MetaKey<Int64>("sealed_through_day")
    package static let windowKey = MetaKey<Int64>("sealed_window_ms")
    package static let freshnessKey = MetaKey<Int64>("sealed_freshness_ms")
    package static let horizonKey = MetaKey<Int64>("acceptance_horizon_ms")
    package static let cleanedKey = MetaKey<Int64>("sealed_cleaned_through_day")
    /// The key of the sealed ids' hashes (hex), made by the first seal.
    package static let hashKey = MetaKey<String>("seal_key")

    /// Schema 16: per sealed day the presentations counted per grouping as `presentation_rollup` counts them, per
    /// user key how many of their records sealing removed, and a keyed hash of every removed record's id (so that
    /// the id sent again is `expired` or `id_conflict`).
    static let migration = """
        CREATE TABLE sealed_presentations (
            day INTEGER NOT NULL,
            dimension INTEGER NOT NULL,
            value TEXT NOT NULL,
            presented INTEGER NOT NULL,
            eligible INTEGER NOT NULL,
            PRIMARY KEY (day, dimension, value)
        ) WITHOUT ROWID;
        CREATE TABLE sealed_users (k INTEGER PRIMARY KEY, records INTEGER NOT NULL);
        CREATE TABLE sealed_ids (hash INTEGER PRIMARY KEY);
        """

    /// Schema 17: what sealing keeps of a sealed day's records is their per-user index entries alone (the entry's
    /// body holds every column attribution and `explain` read), their `records` rows removed; `sealed_ids` gives
    /// each kept one's user key and time (`SealedFacts`), so that its id still finds it. Those of a journal sealed
    /// under schema 16 go from `records` at the next seal, which cleans every sealed day again.
    static let keptFactsMigration = """
        ALTER TABLE sealed_ids ADD COLUMN k INTEGER;
        ALTER TABLE sealed_ids ADD COLUMN ts INTEGER;
        CREATE INDEX sealed_facts ON sealed_ids(k) WHERE k IS NOT NULL;
        DELETE FROM meta WHERE key = 'sealed_cleaned_through_day';
        """

    /// Schema 19: no index of the kept records by user key. It cost about a tenth of what sealing keeps, for the
    /// rare merge of two users by an erasure, which now finds the kept records through the per-user index
    /// (`SealedFacts.move`), and for a split, which reads `sealed_ids` whole.
    static let noKeptFactsIndexMigration = """
        DROP INDEX IF EXISTS sealed_facts;
        """

    /// 00:00Z of the first day that is not sealed: records before it are of sealed days.
    public var sealedBefore: Int64 { (lastSealedDay + 1) * Timestamp.millisecondsPerDay }

    /// The state stored in the journal; nil before the first seal.
    package static func read(on connection: Connection) throws -> SealState? {
        let meta = JournalMeta(connection)
        guard let day = try meta.value(lastSealedDayKey), let window = try meta.value(windowKey),
            let freshness = try meta.value(freshnessKey), let horizon = try meta.value(horizonKey)
        else { return nil }
        return SealState(
            lastSealedDay: day, windowMs: window, freshnessMs: freshness, horizon: horizon,
            cleanedThroughDay: try meta.value(cleanedKey) ?? Int64.min / Timestamp.millisecondsPerDay)
    }

    /// The acceptance horizon alone (it is set before the first day is sealed); nil when none is.
    package static func horizon(on connection: Connection) throws -> Int64? {
        try JournalMeta(connection).value(horizonKey)
    }

    /// Whether rules with windows `settings` may be used with this journal: after a seal, only those it was sealed
    /// with. The error names the key that differs.
    public func check(_ settings: AttributionSettings) -> RulesError? {
        if settings.windowMs != windowMs {
            return RulesError(
                path: "attributionWindowHours",
                "attributionWindowHours is \(settings.windowMs / 3_600_000) but the journal's days were sealed with "
                    + "\(windowMs / 3_600_000): the windows are fixed once days are sealed (SPEC 12)")
        }
        if settings.freshnessMs != freshnessMs {
            return RulesError(
                path: "eligibilityFreshnessHours",
                "eligibilityFreshnessHours is \(settings.freshnessMs / 3_600_000) but the journal's days were sealed "
                    + "with \(freshnessMs / 3_600_000): the windows are fixed once days are sealed (SPEC 12)")
        }
        return nil
    }
}

extension ReadOnlyJournal {
    /// How far sealing got; nil before the first seal (or on a journal older than schema 16).
    public func sealState() throws -> SealState? {
        try SealState.read(on: connection)
    }

    /// Whether sealing took the record with this id out of its `records` row (removed, or kept as an index entry
    /// alone): the journal held it, and its line is no longer stored.
    public func sealed(id: String) throws -> Bool {
        try SealedIDs(on: connection)?.contains(id, on: connection) ?? false
    }
}

/// What the sealed days left in the journal besides records: their presentations' counts and each user's count of
/// removed records.
public enum SealedDays {
    /// How many of the user's records (by key) sealing removed.
    package static func removedRecords(key: Int64, on connection: Connection) throws -> Int {
        let select = try connection.prepare(static: "SELECT records FROM sealed_users WHERE k = ?1")
        try select.bind(key, at: 1)
        defer { select.reset() }
        return try select.step() ? Int(select.int64(0)) : 0
    }

    /// Why a report cannot be computed: a bound inside a sealed day that is not its 00:00Z (SPEC 12).
    public struct PartialSealedDay: Error, Sendable {
        /// 00:00Z of the first day that is not sealed.
        public let firstUnsealedDay: Int64
    }

    /// Refuses a range with a bound inside a sealed day other than at its 00:00Z.
    package static func check(_ range: ReportRange, _ state: SealState?) throws(PartialSealedDay) {
        guard let state else { return }
        for bound in [range.since, range.until].compactMap({ $0 })
        where bound < state.sealedBefore && Timestamp.startOfDay(bound) != bound {
            throw PartialSealedDay(firstUnsealedDay: state.sealedBefore)
        }
    }
}

/// The acceptance horizon and the sealed records' ids (SPEC 12) as the writer tests each record against them: a
/// keyed 64-bit SipHash of each id sealing removed, under the journal's `seal_key`.
package struct SealedIDs {
    package let horizon: Int64
    /// 00:00Z of the first day not sealed (`.min` while the first seal has moved only the horizon).
    package let sealedBefore: Int64
    package let key: [UInt8]

    /// The journal's horizon and key; nil before the first seal.
    package init?(on connection: Connection) throws {
        let meta = JournalMeta(connection)
        guard let horizon = try meta.value(SealState.horizonKey),
            let key = try meta.value(SealState.hashKey).flatMap(Self.bytes(hex:))
        else { return nil }
        self.horizon = horizon
        sealedBefore =
            try meta.value(SealState.lastSealedDayKey).map { ($0 + 1) * Timestamp.millisecondsPerDay } ?? .min
        self.key = key
    }

    /// The hash stored for a sealed record's id.
    package static func hash(_ id: String, key: [UInt8]) -> Int64 {
        Int64(bitPattern: KeyedHash.sipHash(id, key: key))
    }

    /// Whether sealing removed a record with this id.
    package func contains(_ id: String, on connection: Connection) throws -> Bool {
        let select = try connection.prepare(static: "SELECT 1 FROM sealed_ids WHERE hash = ?1")
        try select.bind(Self.hash(id, key: key), at: 1)
        defer { select.reset() }
        return try select.step()
    }

    /// Whether a record the journal does not hold is refused: `expired` before the horizon, `id_conflict` with the
    /// id of a record sealing removed.
    package func refuses(_ record: Record, on connection: Connection) throws -> Bool {
        try record.ts < horizon || contains(record.id, on: connection)
    }

    /// A new random key, as hex.
    package static func newKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in hexByte(UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    private static func hexByte(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }

    package static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
