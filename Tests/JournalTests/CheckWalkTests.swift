import OfferTrackDomain
import SQLite
import TestSupport
import Testing

@testable import AttributionJoin
@testable import JournalStore

/// `CheckWalk` answers exactly what `UserIndexLookup.last`/`first` over the checks answer, for records asked in
/// journal order, whatever its budget (which only decides how often it starts again with the lookups).
@Suite struct CheckWalkTests {
    /// One user's checks of both kinds (`c…` eligible, `d…` denied), with ties at 10:10 and 10:20 whose `seq`
    /// order differs from their id order, and a presentation between two of them, journaled in five batches (so
    /// that both levels of the index hold some).
    static let batches: [[String]] = [
        [check("c1", "10:00"), denied("d1", "10:05")],
        [check("c2b", "10:10"), JournalRecordLines.presented("c2aa", user: "w", ts: "2026-11-28T10:10:00Z")],
        [check("c2a", "10:10")],
        [denied("d2", "10:20"), check("c3", "10:20")],
        [check("c4", "11:00")],
    ]

    /// Records asked about, in journal order, with the latest check before each and the first after (by hand).
    static let cases: [(ts: String, id: String, latest: String?, next: String?)] = [
        ("09:00", "a", nil, "c1"),
        ("10:00", "c1", nil, "d1"),
        ("10:00", "c1z", "c1", "d1"),
        ("10:10", "c2", "d1", "c2a"),
        ("10:10", "c2a", "d1", "c2b"),
        ("10:10", "c2aa", "c2a", "c2b"),
        ("10:10", "c2c", "c2b", "c3"),
        ("10:20", "c3", "c2b", "d2"),
        ("10:20", "z", "d2", "c4"),
        ("12:00", "a", "c4", nil),
    ]

    static func check(_ id: String, _ time: String) -> String {
        JournalRecordLines.capabilities(id, user: "w", ts: "2026-11-28T\(time):00Z")
    }

    static func denied(_ id: String, _ time: String) -> String {
        #"{"type":"capabilities","id":"\#(id)","ts":"2026-11-28T\#(time):00Z","user":"w","authorization":"denied"}"#
    }

    static func record(_ time: String, _ id: String) throws -> Record {
        guard let ts = Timestamp.parse("2026-11-28T\(time):00Z") else { throw SQLiteError(code: 0, message: time) }
        return Record(id: id, ts: ts, user: "w", body: .capabilities(.eligible))
    }

    func lookup(_ scratch: ScratchDirectory) throws -> UserIndexLookup {
        let path = scratch.path + "/j.db"
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        for batch in Self.batches { _ = try writer.append(try batch.map(JournalRecordLines.submission), receivedAt: 0) }
        let connection = try Connection(path: path, mode: .readOnly)
        let key = try #require(try UserKeys.existingKey(of: "w", on: connection))
        return UserIndexLookup(key: key, user: "w", connection: connection)
    }

    @Test(arguments: [1, 2, CheckWalk.defaultBudget, 1_000])
    func answersAsTheLookupsDo(budget: Int) throws {
        let scratch = ScratchDirectory("check-walk")
        let lookup = try lookup(scratch)
        var latest = CheckWalk(lookup, slot: .latest, budget: budget)
        var next = CheckWalk(lookup, slot: .following, budget: budget)
        for item in Self.cases {
            let record = try Self.record(item.ts, item.id)
            let reference = RecordReference(id: record.id, ts: record.ts)
            let walkedLatest = try latest.latest(before: record)?.id
            let walkedNext = try next.next(after: record)?.id
            #expect(walkedLatest == item.latest, "latest before \(item.ts) \(item.id)")
            #expect(walkedNext == item.next, "next after \(item.ts) \(item.id)")
            #expect(walkedLatest == (try lookup.last(UserIndexKind.checks, before: reference)?.record.id))
            #expect(walkedNext == (try lookup.first(UserIndexKind.checks, after: reference)?.record.id))
        }
        latest.finish()
        next.finish()
    }

    /// A record before the last one asked about starts the walk again rather than answering from where it is.
    @Test func aRecordBeforeTheLastOneStartsAgain() throws {
        let scratch = ScratchDirectory("check-walk-back")
        let lookup = try lookup(scratch)
        var walk = CheckWalk(lookup, slot: .latest)
        var following = CheckWalk(lookup, slot: .following)
        for index in [8, 2, 9, 0, 5, 5, 3] {
            let item = Self.cases[index]
            let record = try Self.record(item.ts, item.id)
            #expect(try walk.latest(before: record)?.id == item.latest, "latest before \(item.ts) \(item.id)")
            #expect(try following.next(after: record)?.id == item.next, "next after \(item.ts) \(item.id)")
        }
        walk.finish()
        following.finish()
    }

    /// Every pair of records asked in order, at every budget from 1 to 12: the first is looked up, the second
    /// walked from it (the reads opened where the first was) or looked up when too far.
    @Test func everyPairAtEveryBudget() throws {
        let scratch = ScratchDirectory("check-walk-pairs")
        let lookup = try lookup(scratch)
        for budget in 1...12 {
            for first in Self.cases.indices {
                for second in Self.cases.indices where second >= first {
                    var walk = CheckWalk(lookup, slot: .latest, budget: budget)
                    var following = CheckWalk(lookup, slot: .following, budget: budget)
                    for item in [Self.cases[first], Self.cases[second]] {
                        let record = try Self.record(item.ts, item.id)
                        let what = "budget \(budget), \(first) then \(second): \(item.ts) \(item.id)"
                        #expect(try walk.latest(before: record)?.id == item.latest, "latest, \(what)")
                        #expect(try following.next(after: record)?.id == item.next, "next, \(what)")
                    }
                    walk.finish()
                    following.finish()
                }
            }
        }
    }
}
