import OfferTrackDomain

/// The short histories of the users the writer's last batches joined, each with attribution over it, exactly as
/// last committed: a returning user's refresh takes them instead of reading their records back
/// (`DerivedTables.refresh`), which is most of the join's cost for returning traffic.
///
/// It holds what the journal holds only while this writer is the only one changing it and nothing renames a
/// user: every batch starts by comparing the journal's last `seq` and the derived tables' settings with those it
/// was filled under (`synchronize`), and empties on any difference, on an erasure's rename (`removeAll`) and after
/// a failed transaction (`forget`). A batch's changes are staged and taken in only once it commits.
///
/// Memory is bounded by records, not users: two generations of at most `recordsPerGeneration` records each; when
/// the newer fills up the older is dropped, so a user not joined for a generation's worth of records is read
/// from the journal again. Histories longer than the writer's `historyLimit` are never held.
final class UserHistoryCache {
    /// A user's journaled records (in no particular order) and attribution over them.
    struct Entry {
        var records: [Record]
        var attribution: UserAttribution
    }

    let recordsPerGeneration: Int
    private var newer: [ExactString: Entry] = [:]
    private var older: [ExactString: Entry] = [:]
    private var newerRecords = 0
    /// The current batch's changes: an entry to hold, or nil to drop the user's.
    private var staged: [(user: ExactString, entry: Entry?)] = []
    /// The journal's `max(seq)` and the settings the entries were computed under; nil when unknown.
    private var expectedLastSeq: Int64?
    private var settings: AttributionSettings?
    /// Lookups that found a user, and that did not, since the writer started.
    private(set) var hits = 0
    private(set) var misses = 0

    /// A cache of at most `recordsPerGeneration` records in each generation; 0 holds nothing (every refresh
    /// reads the journal).
    init(recordsPerGeneration: Int = JournalWriter.defaultHistoryCacheRecords) {
        self.recordsPerGeneration = max(0, recordsPerGeneration)
    }

    /// Empties the cache unless the journal still ends at the `seq` this writer left it at and the derived tables
    /// still follow `settings`. Call at the start of every batch's transaction, with both read in it.
    func synchronize(journalLastSeq: Int64, settings: AttributionSettings) {
        guard journalLastSeq != expectedLastSeq || settings != self.settings else { return }
        removeAll()
        expectedLastSeq = journalLastSeq
        self.settings = settings
    }

    /// `user`'s records and attribution as last committed, when held.
    func entry(of user: ExactString) -> Entry? {
        if let entry = newer[user] ?? older[user] {
            hits += 1
            return entry
        }
        misses += 1
        return nil
    }

    /// Holds `entry` as `user`'s once the batch commits (nil: drops theirs). A history longer than a generation
    /// is dropped instead.
    func stage(_ entry: Entry?, for user: ExactString) {
        staged.append((user, entry.flatMap { $0.records.count <= recordsPerGeneration ? $0 : nil }))
    }

    /// The batch whose changes were staged committed, and the journal now ends at `lastSeq`.
    func committed(lastSeq: Int64) {
        // An entry in the newer generation hides the user's older one, which goes with its generation.
        for (user, entry) in staged {
            guard let entry else {
                older[user] = nil
                if let previous = newer.removeValue(forKey: user) { newerRecords -= previous.records.count }
                continue
            }
            if newerRecords + entry.records.count > recordsPerGeneration {
                older = newer
                newer = [:]
                newerRecords = 0
            }
            if let previous = newer.updateValue(entry, forKey: user) { newerRecords -= previous.records.count }
            newerRecords += entry.records.count
        }
        staged = []
        if expectedLastSeq != nil { expectedLastSeq = lastSeq }
    }

    /// Drops every entry (an erasure renamed users, or the tables were recomputed); the next batch fills it again.
    func removeAll() {
        newer = [:]
        older = [:]
        newerRecords = 0
        staged = []
    }

    /// After a failure whose outcome is unknown: empty, and emptied again by the next `synchronize`.
    func forget() {
        removeAll()
        expectedLastSeq = nil
        settings = nil
    }

    /// The records held, in both generations.
    var records: Int { newerRecords + older.values.reduce(0) { $0 + $1.records.count } }
}
