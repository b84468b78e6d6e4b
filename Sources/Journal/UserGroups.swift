import OfferTrackDomain

/// A batch's records grouped by user (exact scalars), users in order of first appearance. A user's records
/// usually arrive together, so a record of the same user as the one before needs no lookup.
struct UserGroups {
    private(set) var groups: [(user: String, records: [Record])] = []
    private var indexByUser: [ExactString: Int] = [:]
    private var lastIndex: Int?

    var isEmpty: Bool { groups.isEmpty }

    mutating func add(_ record: Record) {
        if let lastIndex, ExactString(groups[lastIndex].user) == ExactString(record.user) {
            groups[lastIndex].records.append(record)
            return
        }
        let index = indexByUser[ExactString(record.user)] ?? newGroup(for: record.user)
        groups[index].records.append(record)
        lastIndex = index
    }

    private mutating func newGroup(for user: String) -> Int {
        var records: [Record] = []
        records.reserveCapacity(4)
        groups.append((user, records))
        indexByUser[ExactString(user)] = groups.count - 1
        return groups.count - 1
    }
}
