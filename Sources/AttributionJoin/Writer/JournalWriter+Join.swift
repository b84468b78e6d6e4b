// The join of a committed batch: which path computes each of its users' derived rows.
//
// `refreshDerivedTables` runs in the batch's transaction, after its records are inserted, and sends each user's
// group of the plan (`BatchJoinPlan`) down one path:
//   - merged by an erasure's rename: recomputed whole, after every group (`DerivedTables.recompute`);
//   - no record accepted: nothing (the plan's roll-up counts are taken back);
//   - new to the journal (`KnownUsers`) with every record accepted: the plan's attribution, inserted as it is;
//   - a returning user whose records all come after what the writer summarized of theirs (`UserSummaries`):
//     the added presentations' rows from the summary alone, no history read (`joinAfterSummary`);
//   - anyone else: `DerivedTables.refresh`, which diffs a short history read whole (at most `historyLimit`
//     records) or, for a longer or hinted one, finds each rule's records by index lookups (`BoundedRefresh`),
//     and gives the user's summary after the batch;
//   - during a recompute for new windows, users the copy already holds are refreshed in the copy too.
// Every path decides the rules through `AttributionRules`. The decision table, and what each path relies on and
// keeps true (the roll-ups, `KnownUsers`, `UserKeyCache`'s generation, the long-history hint, the check walks'
// slots, pending renames, the recompute copy): docs/development/batch-join.md.

import JournalStore
import OfferTrackDomain
import SQLite

/// The join kept current in a batch's transaction.
extension JournalWriter {
    /// A group of at least this many records that was refreshed by lookups makes its user a long-history hint
    /// for the next batch (`longHistoryUsers`).
    static let longGroupRecords = 16

    /// The join, kept current in the batch's transaction: each user with a record accepted is recomputed once
    /// (their history read by the key `keys` holds for each accepted record's batch index),
    /// and the roll-ups are written once. A user certainly new to the journal whose records were all accepted
    /// (most, for in-order traffic) takes the plan's attribution as it is (planned now when the plan skipped the
    /// group); any other is recomputed against the journal. During a recompute for new windows, users the copy
    /// already holds are refreshed in it too, with its roll-up changes in `copyChanges`.
    ///
    /// Returns the users whose group of at least `longGroupRecords` was refreshed by lookups: the next batch's
    /// `longHistoryUsers`.
    func refreshDerivedTables(
        _ plan: BatchJoinPlan, batch: [Submission], outcomes: [AppendOutcome], keys: [Int64], firstSeq: Int64,
        merged: [(user: String, key: Int64)], settings: AttributionSettings, copy recompute: DerivedTablesRecompute?,
        copyChanges: inout DerivedTablesRecompute.Step, on connection: Connection
    ) throws -> Set<ExactString> {
        var rollup = plan.rollup
        var longUsers: Set<ExactString> = []
        func isAccepted(_ index: Int) -> Bool { if case .accepted = outcomes[index] { true } else { false } }
        func seq(_ index: Int) -> Int64? { if case .accepted(let seq) = outcomes[index] { seq } else { nil } }
        let mergedUsers = Set(merged.map { ExactString($0.user) })
        for planned in plan.groups {
            var group = planned
            if mergedUsers.contains(ExactString(group.user)) {
                // Recomputed whole below.
                DerivedTables.count(group.attribution, sign: -1, into: &rollup)
                continue
            }
            let allAccepted = group.indices.allSatisfy(isAccepted)
            let accepted = allAccepted ? group.indices : group.indices.filter(isAccepted)
            if accepted.isEmpty {
                DerivedTables.count(group.attribution, sign: -1, into: &rollup)
                continue
            }
            let isNew = caches.knownUsers.noteAppend(of: group.user)
            if let recompute {
                try recompute.refreshCopy(
                    user: group.user, added: accepted.map { batch[$0].record }, mayHaveEarlier: !isNew,
                    historyLimit: historyLimit, batchFirstSeq: firstSeq, into: &copyChanges, on: connection)
            }
            if allAccepted && isNew {
                if !group.isPlanned {
                    // Skipped as a long history's, yet new (the hint is only a hint): planned now.
                    BatchJoinPlan.plan(&group, in: batch, settings: settings)
                    DerivedTables.count(group.attribution, sign: 1, into: &rollup)
                }
                let seqs = group.presentationIndices.map { $0.flatMap(seq) }
                try DerivedTables.insert(
                    user: group.user, group.attribution, presentationSeqs: seqs, on: connection)
                caches.summaries.remember(
                    UserSummary.empty.adding(accepted.map { batch[$0].record }), key: keys[accepted[0]])
                continue
            }
            DerivedTables.count(group.attribution, sign: -1, into: &rollup)
            let user = ExactString(group.user)
            let key = keys[accepted[0]]
            let added = accepted.map { batch[$0].record }
            let addedSeqs = accepted.map { seq($0) ?? 0 }
            let isLong = accepted.count >= Self.longGroupRecords
            if try joinAfterSummary(
                key: key, added: added, addedSeqs: addedSeqs, settings: settings, rollup: &rollup, on: connection)
            {
                // A hint kept: were the next group not after the summary, lookups would be right for it.
                if isLong { longUsers.insert(user) }
                continue
            }
            if try joinLateCheck(
                user: group.user, key: key, added: added, settings: settings, batchFirstSeq: firstSeq,
                rollup: &rollup, on: connection)
            {
                continue
            }
            caches.joinCounts.refreshed += 1
            let refreshed = try DerivedTables.refresh(
                user: group.user, key: key, added: added, addedSeqs: addedSeqs, mayHaveEarlier: !isNew,
                settings: settings, rollup: &rollup, historyLimit: historyLimit,
                knownLong: caches.longHistoryUsers.contains(user), batchFirstSeq: firstSeq, on: connection)
            caches.summaries.remember(refreshed.summary, key: key)
            if refreshed.bounded && isLong { longUsers.insert(user) }
        }
        for (user, formerKey) in merged {
            guard let key = try UserKeys.existingKey(of: user, on: connection) else { continue }
            try DerivedTables.recompute(
                user: user, key: key, formerKey: formerKey, settings: settings, rollup: &rollup, on: connection)
            if let recompute, recompute.holds(user: user) {
                try DerivedTables.recompute(
                    user: user, key: key, formerKey: formerKey, settings: recompute.settings,
                    rollup: &copyChanges.rollup, tables: .recompute, on: connection)
            }
        }
        try rollup.write(on: connection)
        return longUsers
    }

    /// Joins `added` (a returning user's records the batch journaled, with their `seq`s) from the user's summary
    /// alone when it decides every row they change (`UserSummary.inOrderPresentations`): the added loaded
    /// presentations' rows, nothing read. Returns false, having written nothing, when the summary is not known or
    /// does not decide them.
    private func joinAfterSummary(
        key: Int64, added: [Record], addedSeqs: [Int64], settings: AttributionSettings, rollup: inout DayRollup,
        on connection: Connection
    ) throws -> Bool {
        guard let summary = caches.summaries[key] else { return false }
        let order = RecordOrder.order(added)
        guard let facts = summary.inOrderPresentations(order.map { added[$0] }, settings) else { return false }
        for (index, fact) in facts {
            try DerivedTables.insertPresentation(fact, seq: addedSeqs[order[index]], tables: .live, on: connection)
            rollup.count(fact, sign: 1)
        }
        caches.summaries.remember(summary.adding(added), key: key)
        caches.joinCounts.fromSummary += 1
        return true
    }

    /// Joins a returning user's lone check that came after their summary's latest check but behind a later record
    /// of theirs (`UserSummary.lateCheck`: a visit's check committed after its presentation) by deciding rule 4.4
    /// again for the loaded presentations after it, one range read, instead of every lookup of a refresh. Returns
    /// false, having written nothing, when the summary is not known or does not decide the group.
    private func joinLateCheck(
        user: String, key: Int64, added: [Record], settings: AttributionSettings, batchFirstSeq: Int64,
        rollup: inout DayRollup, on connection: Connection
    ) throws -> Bool {
        guard let summary = caches.summaries[key], let check = summary.lateCheck(added, settings) else { return false }
        let bounded = BoundedRefresh(
            user: user, key: key, settings: settings, tables: .live, connection: connection,
            batchFirstSeq: batchFirstSeq)
        try bounded.redecide(afterLatestCheck: check, rollup: &rollup)
        caches.summaries.remember(summary.adding(added), key: key)
        caches.joinCounts.lateChecks += 1
        return true
    }
}
