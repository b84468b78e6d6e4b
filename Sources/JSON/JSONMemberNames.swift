/// The member names a caller keeps from an object (``JSONParser/parseObject(_:keeping:_:)``), each numbered by its
/// position (its slot), matched against a member's unescaped name by exact bytes (never canonical equivalence).
public struct JSONMemberNames: Sendable {
    /// The most names one table holds: a scan tracks the kept members it has seen in a 64-bit mask.
    public static let maximumCount = 64

    /// Every name's bytes, one after the other, grouped by length.
    private let storage: [UInt8]
    /// The names as (offset in `storage`, slot), sorted by length.
    private let entries: [(offset: Int, slot: Int)]
    /// `entries[starts[n]..<starts[n + 1]]` are the names of `n` bytes.
    private let starts: [Int]

    /// A table of `names`, whose slots are their positions; at most ``maximumCount`` distinct names.
    public init(_ names: [StaticString]) {
        precondition(names.count <= Self.maximumCount, "more than \(Self.maximumCount) member names")
        let byLength = names.indices.sorted { (names[$0].utf8CodeUnitCount, $0) < (names[$1].utf8CodeUnitCount, $1) }
        var storage: [UInt8] = []
        var entries: [(offset: Int, slot: Int)] = []
        let longest = names.map(\.utf8CodeUnitCount).max() ?? 0
        var starts = [Int](repeating: 0, count: longest + 2)
        for slot in byLength {
            let name = UnsafeBufferPointer(start: names[slot].utf8Start, count: names[slot].utf8CodeUnitCount)
            entries.append((storage.count, slot))
            storage.append(contentsOf: name)
            starts[name.count + 1] = entries.count
        }
        for length in 1..<starts.count { starts[length] = max(starts[length], starts[length - 1]) }
        self.storage = storage
        self.entries = entries
        self.starts = starts
    }

    /// The slot of the name whose UTF-8 bytes are exactly `name`, or nil when it is not in the table.
    public func slot(of name: UnsafeRawBufferPointer) -> Int? {
        let length = name.count
        guard length + 1 < starts.count else { return nil }
        let candidates = starts[length]..<starts[length + 1]
        return storage.withUnsafeBufferPointer { stored -> Int? in
            entries.withUnsafeBufferPointer { entries -> Int? in
                for index in candidates {
                    let entry = entries[index]
                    var offset = 0
                    while offset < length, stored[entry.offset + offset] == name[offset] { offset += 1 }
                    if offset == length { return entry.slot }
                }
                return nil
            }
        }
    }
}
