import JournalStore
import OfferTrackDomain

/// Each user's accepted records in a committed batch (`JournalWriter.lastBatchUsers`, for the daemon's watch on
/// hot users and its largest-user metric), users in order of their first record in the batch, those with no
/// record accepted left out.
enum BatchUserCounts {
    /// From the join plan's groups, which hold the batch grouped by user already (so no user is hashed again).
    static func counts(
        groups: [BatchJoinPlan.Group], outcomes: [AppendOutcome]
    ) -> [(user: String, records: Int)] {
        var users: [(user: String, records: Int)] = []
        users.reserveCapacity(groups.count)
        for group in groups {
            let records = group.indices.count { isAccepted(outcomes[$0]) }
            if records > 0 { users.append((group.user, records)) }
        }
        return users
    }

    /// Without a plan (a journal that keeps no attribution): the batch grouped here.
    static func counts(_ batch: [Submission], outcomes: [AppendOutcome]) -> [(user: String, records: Int)] {
        guard outcomes.contains(where: isAccepted) else { return [] }
        var users: [(user: String, records: Int)] = []
        var indexByUser: [ExactString: Int] = [:]
        for (submission, outcome) in zip(batch, outcomes) {
            let user = submission.record.user
            let index: Int
            if let last = users.indices.last, ExactString.equals(users[last].user, user) {
                index = last
            } else if let known = indexByUser[ExactString(user)] {
                index = known
            } else {
                index = users.count
                indexByUser[ExactString(user)] = index
                users.append((user, 0))
            }
            if isAccepted(outcome) { users[index].records += 1 }
        }
        return users.filter { $0.records > 0 }
    }

    private static func isAccepted(_ outcome: AppendOutcome) -> Bool {
        if case .accepted = outcome { true } else { false }
    }
}
