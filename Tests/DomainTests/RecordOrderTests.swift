import OfferTrackDomain
import Testing

/// `RecordOrder.sorted` puts records in journal order exactly as `sorted(by: RecordOrder.precedes)` does.
@Suite struct RecordOrderTests {
    static func record(_ id: String, _ ts: Int64) -> Record {
        Record(id: id, ts: ts, user: "u", body: .capabilities(.eligible))
    }

    /// Inputs by hand, each with the ids in the order expected: times first, then ids by their bytes (not by
    /// `String`'s `<`: "Z" before "a", "é" after "z"), equal records kept in their input order.
    static let cases: [(input: [(String, Int64)], expected: [String])] = [
        ([], []),
        ([("a", 1)], ["a"]),
        ([("b", 2), ("a", 1)], ["a", "b"]),
        ([("b", 1), ("a", 1), ("c", 0)], ["c", "a", "b"]),
        ([("a", 5), ("Z", 5), ("é", 5), ("z", 5)], ["Z", "a", "z", "é"]),
        ([("x", 3), ("x", 3), ("w", 3)], ["w", "x", "x"]),
        ([("a", .max), ("b", .min), ("c", 0)], ["b", "c", "a"]),
    ]

    @Test func sortsIntoJournalOrder() {
        for item in Self.cases {
            let records = item.input.map { Self.record($0.0, $0.1) }
            #expect(RecordOrder.sorted(records).map(\.id) == item.expected, "\(item.input)")
            #expect(RecordOrder.sorted(records) == records.sorted(by: RecordOrder.precedes))
        }
    }

    /// Equal records (the same id at the same time, as a retry) keep their input order.
    @Test func equalRecordsKeepTheirOrder() {
        let first = Record(id: "x", ts: 1, user: "first", body: .capabilities(.eligible))
        let second = Record(id: "x", ts: 1, user: "second", body: .capabilities(.eligible))
        let sorted = RecordOrder.sorted([second, Self.record("a", 2), first])
        #expect(sorted.map(\.user) == ["second", "first", "u"])
    }
}
