import Dispatch
import JournalStore
import OfferTrackDomain

/// The part of a batch's join that needs no database: the batch's records grouped by user (exact scalars, in
/// order of first appearance), each group's attribution as if the user had nothing journaled before, and the
/// roll-up counts of all of them. The writer computes it on another thread while it inserts the records, then
/// uses each group's attribution only if the user was new and every one of their records was accepted.
///
/// Groups of users the writer knows to have a long history (`skipping`: a hot user's hundreds of records a
/// batch) are not attributed: the writer refreshes them against the journal, and plans one itself in the rare
/// case it turns out new after all.
struct BatchJoinPlan: Sendable {
    struct Group: Sendable {
        let user: String
        /// The group's submissions, as indices into the batch.
        var indices: [Int]
        /// Attribution over every record of the group.
        var attribution = UserAttribution(presentations: [], conversion: nil)
        /// For each of `attribution.presentations`, the index of its record in the batch.
        var presentationIndices: [Int?] = []
        /// Whether `attribution` and `presentationIndices` were computed (false: skipped, both empty).
        var isPlanned = false
    }

    private(set) var groups: [Group] = []
    /// Every group's attribution counted once.
    private(set) var rollup = DayRollup()

    /// Groups the batch by user and plans each group, except those of `skipping` and of the users
    /// `mayBeJournaled` (a copy of the writer's `KnownUsers` filter, when complete) may hold: those the writer
    /// refreshes against the journal, so planning them as new would be thrown away.
    init(
        batch: [Submission], settings: AttributionSettings, skipping: Set<ExactString> = [],
        mayBeJournaled: UserFilter? = nil
    ) {
        var indexByUser: [ExactString: Int] = [:]
        var previous: (user: ExactString, group: Int)?
        for (index, submission) in batch.enumerated() {
            let user = ExactString(submission.record.user)
            // A user's records usually arrive together: the same user as the record before needs no lookup.
            if let previous, previous.user == user {
                groups[previous.group].indices.append(index)
                continue
            }
            let group =
                indexByUser[user]
                ?? {
                    groups.append(Group(user: user.value, indices: []))
                    indexByUser[user] = groups.count - 1
                    return groups.count - 1
                }()
            groups[group].indices.append(index)
            previous = (user, group)
        }
        func skips(_ user: String) -> Bool {
            (!skipping.isEmpty && skipping.contains(ExactString(user))) || mayBeJournaled?.mayContain(user) == true
        }
        for index in groups.indices where !skips(groups[index].user) {
            Self.plan(&groups[index], in: batch, settings: settings)
            DerivedTables.count(groups[index].attribution, sign: 1, into: &rollup)
        }
    }

    /// Attributes `group` as if its user had nothing journaled before (not counted in any roll-up).
    static func plan(_ group: inout Group, in batch: [Submission], settings: AttributionSettings) {
        let records = group.indices.map { batch[$0].record }
        group.attribution = Attribution.attribute(userRecords: records, settings: settings)
        group.presentationIndices = batchIndices(of: group.attribution.presentations, among: group.indices, in: batch)
        group.isPlanned = true
    }

    /// The batch index of each presentation's record (a presentation's id is its record's).
    private static func batchIndices(
        of presentations: [PresentationFact], among indices: [Int], in batch: [Submission]
    ) -> [Int?] {
        if presentations.isEmpty { return [] }
        if indices.count <= 16 {
            return presentations.map { fact in
                indices.first { ExactString(batch[$0].record.id) == ExactString(fact.id) }
            }
        }
        var byID: [ExactString: Int] = [:]
        for index in indices { byID[ExactString(batch[index].record.id)] = index }
        return presentations.map { byID[ExactString($0.id)] }
    }

    /// Plans `batch` on another thread when it is big enough to be worth the hand-over, else right away.
    static func start(
        batch: [Submission], settings: AttributionSettings, skipping: Set<ExactString> = [],
        mayBeJournaled: UserFilter? = nil
    ) -> PendingBatchJoinPlan {
        PendingBatchJoinPlan(
            batch: batch, settings: settings, skipping: skipping, mayBeJournaled: mayBeJournaled,
            inBackground: batch.count >= backgroundThreshold)
    }

    /// Below this many records the hand-over to another thread costs more than it saves.
    static let backgroundThreshold = 256
}

/// A `BatchJoinPlan` being computed; `wait()` returns it.
final class PendingBatchJoinPlan: @unchecked Sendable {
    // @unchecked: `plan` is written once before `done` is signalled and read only after waiting on it.
    private var plan: BatchJoinPlan?
    private let done = DispatchSemaphore(value: 0)

    init(
        batch: [Submission], settings: AttributionSettings, skipping: Set<ExactString>, mayBeJournaled: UserFilter?,
        inBackground: Bool
    ) {
        guard inBackground else {
            plan = BatchJoinPlan(batch: batch, settings: settings, skipping: skipping, mayBeJournaled: mayBeJournaled)
            done.signal()
            return
        }
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            plan = BatchJoinPlan(batch: batch, settings: settings, skipping: skipping, mayBeJournaled: mayBeJournaled)
            done.signal()
        }
    }

    /// Waits for the plan (once per plan).
    func wait() -> BatchJoinPlan {
        done.wait()
        guard let plan else { preconditionFailure("a batch's join plan was signalled done without being computed") }
        return plan
    }
}
