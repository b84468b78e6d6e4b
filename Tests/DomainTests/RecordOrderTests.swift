import OfferTrackDomain
import Simulator
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

    /// Ids compared byte by byte exactly as `String.UTF8View.lexicographicallyPrecedes` does: by hand, then
    /// seeded random strings of a small alphabet (ASCII, two- and three-byte scalars), so prefixes and ties are
    /// frequent.
    @Test func idsCompareByTheirBytes() {
        let byHand: [(String, String, Bool)] = [
            ("", "", false), ("", "a", true), ("a", "", false), ("ab", "abc", true), ("abc", "ab", false),
            ("abc", "abd", true), ("abd", "abc", false), ("Z", "a", true), ("z", "é", true), ("é", "z", false),
            ("01M6A6FX4Y00009HTP", "01M6A6FX4Y00009HTQ", true), ("x", "x", false),
        ]
        for (lhs, rhs, expected) in byHand { #expect(RecordOrder.idPrecedes(lhs, rhs) == expected, "\(lhs) \(rhs)") }
        var random = SimulationRandom(seed: 31)
        let alphabet: [Character] = ["a", "b", "Z", "é", "€", "0"]
        for _ in 0..<20_000 {
            let lhs = String(
                (0..<Int.random(in: 0..<5, using: &random)).map { _ in
                    alphabet[Int.random(in: 0..<alphabet.count, using: &random)]
                })
            let rhs = String(
                (0..<Int.random(in: 0..<5, using: &random)).map { _ in
                    alphabet[Int.random(in: 0..<alphabet.count, using: &random)]
                })
            #expect(RecordOrder.idPrecedes(lhs, rhs) == lhs.utf8.lexicographicallyPrecedes(rhs.utf8), "\(lhs) \(rhs)")
        }
    }

    /// Random short lists, some already in order, with repeated times and ids: the same order as a stable sort
    /// by `precedes`, equal records in their input order.
    @Test func ordersLikeAStableSort() {
        var random = SimulationRandom(seed: 47)
        for round in 0..<5_000 {
            var records = (0..<Int.random(in: 0..<9, using: &random)).map { index in
                Record(
                    id: ["a", "b", "c"][Int.random(in: 0..<3, using: &random)],
                    ts: Int64(Int.random(in: 0..<3, using: &random)), user: "u\(index)",
                    body: .capabilities(.eligible))
            }
            if round % 2 == 0 { records = records.sorted(by: RecordOrder.precedes) }
            let stable = records.enumerated().sorted {
                RecordOrder.precedes($0.element, $1.element)
                    || (!RecordOrder.precedes($1.element, $0.element) && $0.offset < $1.offset)
            }.map(\.offset)
            #expect(RecordOrder.order(records) == stable, "\(records.map { ($0.id, $0.ts, $0.user) })")
        }
    }
}
