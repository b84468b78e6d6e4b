import JournalStore
import OfferTrackDomain
import SQLite

/// One user's checks (rule 4.4: both kinds, every level of the per-user index) walked in journal order beside a
/// run of the user's records asked about in journal order: for each record, the latest check before it or the
/// first check after it, exactly as `UserIndexLookup.last`/`first` over `UserIndexKind.checks` answer.
///
/// A hot user's batch puts hundreds of records between the same few journaled checks; asked one at a time, each
/// costs four range reads. The walk keeps the four reads open and moves them on from one record to the next, so
/// a record close to the one before costs only the checks between them. The reads are opened at the record asked
/// about before, once a second one comes (so a record alone costs its lookup, nothing more), and read at most
/// `budget` entries for one record beyond that record's time: past that (a record far from the one before, in a
/// dense history) the record is looked up and the reads closed, so no record costs more than opening them at its
/// predecessor, `budget` entries and the lookups, whatever the history holds.
struct CheckWalk {
    private let lookup: UserIndexLookup
    private let budget: Int
    /// Which statements the walk reads with: walks open at the same time on one connection need other slots.
    private let slot: Slot
    private var reads: [Read] = []
    /// The latest check passed (before every record asked about, up to `position`), when `knowsPassed`.
    private var passed: Record?
    private var knowsPassed = false
    /// The last record asked about: where closed reads open, and before which a record is looked up.
    private var position: Record?

    /// One kind in one level: its open statement and the entries read but not passed yet, in journal order (a
    /// read returns a time's entries by `seq`, not by id).
    private struct Read {
        let statement: Statement
        var pending: [Record] = []
        var ended = false
    }

    /// The default `budget`: about the entries of two lookups.
    static let defaultBudget = 8

    /// The walks that may be open at once on one connection, each with statements of its own
    /// (`UserIndexLookup.openRead`): a batch's presentations (`latest`) and the windows its late checks reopen
    /// (`following`).
    enum Slot: Int, CaseIterable {
        case latest = 0
        case following = 1
    }

    init(_ lookup: UserIndexLookup, slot: Slot, budget: Int = defaultBudget) {
        self.lookup = lookup
        self.slot = slot
        self.budget = max(1, budget)
    }

    /// The latest check before `record` in journal order (strictly).
    mutating func latest(before record: Record) throws -> Record? {
        if try knowsPassed && walk(to: record) {
            pass { RecordOrder.precedes($0, record) }
            return passed
        }
        let found = try lookup.last(UserIndexKind.checks, before: reference(record))?.record
        settle(at: record)
        passed = found
        knowsPassed = true
        return found
    }

    /// The first check after `record` in journal order (strictly).
    mutating func next(after record: Record) throws -> Record? {
        guard try walk(to: record) else {
            let found = try lookup.first(UserIndexKind.checks, after: reference(record))?.record
            settle(at: record)
            knowsPassed = false
            return found
        }
        pass { !RecordOrder.precedes(record, $0) }
        guard let time = reads.compactMap({ $0.pending.first?.ts }).min() else { return nil }
        // A read returns a time's entries by `seq`: every entry at the first time after `record` is needed to
        // know which comes first by id.
        if time > record.ts { _ = try fill(through: time, budget: .max) }
        var first: Record?
        for read in reads {
            guard let head = read.pending.first else { continue }
            if first.map({ RecordOrder.precedes(head, $0) }) ?? true { first = head }
        }
        return first
    }

    /// Resets the open reads (call when done, before the statements are used elsewhere).
    mutating func finish() {
        close()
        knowsPassed = false
        position = nil
    }

    /// After a lookup answered `record`: the reads closed, to be opened at `record` when the next record asked
    /// about is after it (a record alone costs its lookup and nothing more).
    private mutating func settle(at record: Record) {
        close()
        position = record
    }

    private mutating func close() {
        for read in reads { read.statement.reset() }
        reads = []
    }

    /// Moves the walk on to `record`, first opening the reads at the last record asked about when they are
    /// closed (reading that record's time whole, as its lookup did); false when the caller must look `record`
    /// up: nothing asked before, `record` before the last one, or over the budget.
    private mutating func walk(to record: Record) throws -> Bool {
        guard let position, !RecordOrder.precedes(record, position) else { return false }
        if reads.isEmpty {
            for kind in UserIndexKind.checks {
                for level in UserIndexLookup.Level.allCases {
                    reads.append(Read(statement: try lookup.openRead(kind, level, from: position.ts, slot: slot)))
                }
            }
            _ = try fill(through: position.ts, budget: .max)
        }
        return try advance(to: record)
    }

    /// Reads on to `record`: until every read holds an entry after `record`'s time or has ended, at most
    /// `budget` entries in all (false past it).
    private mutating func advance(to record: Record) throws -> Bool {
        guard try fill(through: record.ts, budget: budget) else { return false }
        position = record
        return true
    }

    /// Reads on until every read holds an entry after time `ts` or has ended, at most `budget` entries in all
    /// (false past it). Every entry at or before `ts` is then pending or passed.
    private mutating func fill(through ts: Int64, budget: Int) throws -> Bool {
        var count = 0
        for index in reads.indices {
            while !reads[index].ended, reads[index].pending.last.map({ $0.ts <= ts }) ?? true {
                guard count < budget else { return false }
                count += 1
                guard let found = try lookup.step(reads[index].statement) else {
                    reads[index].ended = true
                    reads[index].statement.reset()
                    break
                }
                insert(found.record, into: &reads[index].pending)
            }
        }
        return true
    }

    /// Moves the pending entries `isPassed` holds for (a prefix of each read's, in journal order) into `passed`.
    private mutating func pass(_ isPassed: (Record) -> Bool) {
        for index in reads.indices {
            let count = reads[index].pending.prefix(while: isPassed).count
            guard count > 0 else { continue }
            let last = reads[index].pending[count - 1]
            if passed.map({ RecordOrder.precedes($0, last) }) ?? true { passed = last }
            reads[index].pending.removeFirst(count)
        }
    }

    /// Inserts `record` in journal order (entries come in time order, so it belongs near the end).
    private func insert(_ record: Record, into pending: inout [Record]) {
        var index = pending.count
        while index > 0, RecordOrder.precedes(record, pending[index - 1]) { index -= 1 }
        pending.insert(record, at: index)
    }

    private func reference(_ record: Record) -> RecordReference { RecordReference(id: record.id, ts: record.ts) }
}
