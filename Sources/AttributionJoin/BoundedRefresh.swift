import JournalStore
import OfferTrackDomain
import SQLite

/// Keeps one user's derived rows equal to `Attribution.attribute` over all of their records after a batch added
/// some, without reading the user's history: each thing rules 4.0–4.7 look at is found by a range read of one
/// kind of record (`UserIndexLookup`), so the work is bounded by the batch and the records at the times it asks
/// about, whatever the user's history holds (a placeholder id, a test device, years of visits).
///
/// `DerivedTables.refresh` uses it for users whose history is longer than a few dozen records; for shorter ones
/// reading the history whole is cheaper.
struct BoundedRefresh {
    let user: String
    let key: Int64
    let settings: AttributionSettings
    let tables: DerivedTableSet
    let connection: Connection
    /// The batch's first `seq`: records below it were journaled before the batch.
    let batchFirstSeq: Int64

    /// Brings the user's rows up to date after `added` (this batch's records of the user, journaled with `seqs`
    /// when given) were journaled, adding the roll-up changes to `rollup`. Returns the user's summary before the
    /// batch, from the lookups it made.
    func run(added: [Record], seqs: [Int64]? = nil, rollup: inout DayRollup) throws -> UserSummary {
        let now = UserIndexLookup(key: key, user: user, connection: connection)
        var before = now
        before.skippingFrom = batchFirstSeq
        let order = RecordOrder.order(added)
        let sorted = order.map { added[$0] }
        let sortedSeqs = seqs.flatMap { seqs in seqs.count == added.count ? order.map { seqs[$0] } : nil }
        let latest = try refreshPresentations(sorted, seqs: sortedSeqs, now: now, before: before, rollup: &rollup)
        let firstOutcome = try refreshConversion(sorted, now: now, before: before, rollup: &rollup)
        return UserSummary.empty.adding([latest.check, latest.presentation, firstOutcome].compactMap { $0 })
    }

    /// Rule 4.4's verdict on each added loaded presentation, and again on each earlier one an added check may now
    /// be the latest check before. Returns the latest check and loaded presentation before the batch.
    private func refreshPresentations(
        _ added: [Record], seqs: [Int64]?, now: UserIndexLookup, before: UserIndexLookup, rollup: inout DayRollup
    ) throws -> (check: Record?, presentation: Record?) {
        // Every earlier check is at or before this one: for a presentation after it, it is the latest earlier one.
        let latestEarlierCheck = try before.last(UserIndexKind.checks, before: nil)?.record
        // A presentation before that check needs the latest check before it, the batch's included: the walk
        // answers the batch's presentations in order, reading the checks between one and the next.
        var walk = CheckWalk(now, slot: .latest)
        var latestAddedCheck: Record?
        for (index, record) in added.enumerated() {
            switch record.body {
            case .capabilities:
                latestAddedCheck = record
            case .presented(let offer, loaded: true):
                let check: Record?
                if let earlier = latestEarlierCheck, !RecordOrder.precedes(earlier, record) {
                    check = try walk.latest(before: record)
                } else {
                    check = later(latestAddedCheck, latestEarlierCheck)
                }
                let fact = PresentationFact(
                    id: record.id, ts: record.ts, offer: offer, eligible: eligibility(check, at: record.ts) == .passes)
                try DerivedTables.insertPresentation(fact, seq: seqs?[index], tables: tables, on: connection)
                rollup.count(fact, sign: 1)
            default:
                continue
            }
        }
        walk.finish()
        // An added check changes only earlier presentations after it, at most F after it and before the next check:
        // each window of such presentations (overlapping ones merged) is decided again in one sweep of the checks
        // that can be the latest before them, so ties and many checks cost one read of the window, not one per
        // presentation.
        guard let latestEarlier = try before.last([.loadedPresentation], before: nil)?.record else {
            return (latestEarlierCheck, nil)
        }
        var windows: [(from: Record, through: Int64)] = []
        var following = CheckWalk(now, slot: .following)
        for record in added {
            guard case .capabilities = record.body, RecordOrder.precedes(record, latestEarlier) else { continue }
            // Only presentations before the next check can have this one as their latest: a hot user's late check
            // costs the few records up to the next one, not a day of them.
            var through = saturatingAdd(record.ts, settings.freshnessMs)
            if let next = try following.next(after: record) {
                through = min(through, next.ts)
            }
            if let last = windows.last, record.ts <= last.through {
                windows[windows.count - 1].through = max(last.through, through)
            } else {
                windows.append((record, through))
            }
        }
        following.finish()
        for window in windows {
            try redecide(window: window, now: now, before: before, rollup: &rollup)
        }
        return (latestEarlierCheck, latestEarlier)
    }

    /// Rule 4.4 again for the earlier loaded presentations after `window.from` up to `window.through`, from the
    /// checks of `[from.ts, through]` swept in journal order with them; writes the verdicts that changed.
    private func redecide(
        window: (from: Record, through: Int64), now: UserIndexLookup, before: UserIndexLookup,
        rollup: inout DayRollup
    ) throws {
        let presentations = try before.range(
            .loadedPresentation, after: reference(window.from), through: window.through)
        guard !presentations.isEmpty else { return }
        // Every presentation of the window is after the check that opened it, which is the latest check before it
        // or precedes that one: the checks from its time on are all the sweep needs.
        let earliest = RecordReference(id: "", ts: window.from.ts)
        var checks = try UserIndexKind.checks.flatMap { try now.range($0, after: earliest, through: window.through) }
        checks.sort { RecordOrder.precedes($0.record, $1.record) }
        var next = 0
        var latest: Record?
        for presentation in presentations {
            while next < checks.count, RecordOrder.precedes(checks[next].record, presentation.record) {
                latest = checks[next].record
                next += 1
            }
            try store(eligibility(latest, at: presentation.record.ts) == .passes, of: presentation, rollup: &rollup)
        }
    }

    /// Rule 4.4 again after `check`, journaled in this batch, became the user's latest check
    /// (`UserSummary.lateCheck`): every loaded presentation after it now has it as its latest check, and those
    /// more than F after it are not eligible with it or with any earlier one, so one range read of the ones up to F
    /// after it is all the work; writes the verdicts that changed.
    func redecide(afterLatestCheck check: Record, rollup: inout DayRollup) throws {
        var before = UserIndexLookup(key: key, user: user, connection: connection)
        before.skippingFrom = batchFirstSeq
        let through = saturatingAdd(check.ts, settings.freshnessMs)
        for presentation in try before.range(.loadedPresentation, after: reference(check), through: through) {
            try store(eligibility(check, at: presentation.record.ts) == .passes, of: presentation, rollup: &rollup)
        }
    }

    /// Writes rule 4.4's verdict `eligible` on an earlier loaded presentation when it differs from its row, with the
    /// roll-up's change.
    private func store(_ eligible: Bool, of presentation: UserIndexLookup.Found, rollup: inout DayRollup) throws {
        guard case .presented(let offer, _) = presentation.record.body else { return }
        let stored = try DerivedTables.storedEligibility(
            ts: presentation.record.ts, seq: presentation.seq, tables: tables, on: connection)
        guard stored != eligible else { return }
        let fact = PresentationFact(
            id: presentation.record.id, ts: presentation.record.ts, offer: offer, eligible: eligible)
        if let stored {
            var old = fact
            old.eligible = stored
            rollup.count(old, sign: -1)
        }
        try DerivedTables.storeEligibility(
            fact, seq: presentation.seq, replacing: stored != nil, tables: tables, on: connection)
        rollup.count(fact, sign: 1)
    }

    private func saturatingAdd(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    /// The conversion's row: recomputed from lookups when an added record can change it (rule by rule), else left.
    /// Returns the first `subscribed` outcome before the batch.
    private func refreshConversion(
        _ added: [Record], now: UserIndexLookup, before: UserIndexLookup, rollup: inout DayRollup
    ) throws -> Record? {
        let earlierOutcome = try before.first([.subscribed], after: nil)?.record
        let old = try earlierOutcome.flatMap {
            try DerivedTables.storedConversion(ts: $0.ts, id: $0.id, tables: tables, on: connection)
        }
        guard mayChange(old, after: added) else { return earlierOutcome }
        try DerivedTables.replace(
            conversion: old, with: try conversion(now), user: user, tables: tables, rollup: &rollup, on: connection)
        return earlierOutcome
    }

    /// Whether any of `added` can change the conversion `old` (nil: the user had none): a subscribed outcome or a
    /// loaded presentation before it, a check before it (its candidate's eligibility), a lapse record within its
    /// holding period before the lapse it has, a review naming it.
    func mayChange(_ old: Conversion?, after added: [Record]) -> Bool {
        guard let old else {
            return added.contains { if case .outcome(subscribed: true, _, _) = $0.body { true } else { false } }
        }
        for record in added {
            let beforeIt = RecordOrder.precedes(ts: record.ts, id: record.id, ts: old.ts, id: old.id)
            switch record.body {
            case .outcome(subscribed: true, _, _), .presented(_, loaded: true), .capabilities:
                if beforeIt { return true }
            case .review(let review):
                if ExactString.equals(review.conversion, old.id) { return true }
            case .outcome, .presented, .erasure:
                break
            }
            guard AttributionRules.isLapse(record.body), old.status.isAttributed,
                AttributionRules.isInHoldingPeriod(record.ts, conversionAt: old.ts, settings)
            else { continue }
            guard let lapse = old.lapse else { return true }
            if RecordOrder.precedes(ts: record.ts, id: record.id, ts: lapse.ts, id: lapse.id) { return true }
        }
        return false
    }

    /// Rules 4.0–4.4, 4.6 and 4.7's review for the user's records as journaled now, each from a lookup.
    private func conversion(_ now: UserIndexLookup) throws -> Conversion? {
        guard let outcome = try now.first([.subscribed], after: nil)?.record,
            case .outcome(_, _, let offerId) = outcome.body
        else { return nil }
        let review = try now.latestReview(of: outcome.id).flatMap { found -> ConversionReview? in
            guard case .review(let review) = found.record.body else { return nil }
            return ConversionReview(record: reference(found.record), decision: review.decision, reason: review.reason)
        }
        func unattributed(_ reason: UnattributedReason, _ candidate: PresentationFact?) -> Conversion {
            Conversion(
                id: outcome.id, ts: outcome.ts, status: .unattributed(reason), presentation: candidate, review: review)
        }
        if AttributionRules.isShared(user, settings) { return unattributed(.sharedUser, nil) }
        var named: Record?
        if let offerId, let found = try now.presentation(id: offerId)?.record,
            case .presented(_, loaded: true) = found.body, RecordOrder.precedes(found, outcome)
        {
            named = found
        }
        let latest = named == nil ? try now.last([.loadedPresentation], before: reference(outcome))?.record : nil
        guard let candidate = AttributionRules.candidate(named: named, latest: latest),
            case .presented(let offer, _) = candidate.body
        else {
            return unattributed(.noPresentation, nil)
        }
        let check = try now.last(UserIndexKind.checks, before: reference(candidate))?.record
        let eligibility = self.eligibility(check, at: candidate.ts)
        let fact = PresentationFact(id: candidate.id, ts: candidate.ts, offer: offer, eligible: eligibility == .passes)
        let status = AttributionRules.status(
            conversionAt: outcome.ts, candidate: (candidate.ts, eligibility), settings)
        guard status.isAttributed else {
            return Conversion(id: outcome.id, ts: outcome.ts, status: status, presentation: fact, review: review)
        }
        let lapse = try now.first(UserIndexKind.lapses, after: reference(outcome), afterTime: true)?.record
        let lapsed = lapse.flatMap {
            AttributionRules.isInHoldingPeriod($0.ts, conversionAt: outcome.ts, settings) ? reference($0) : nil
        }
        return Conversion(
            id: outcome.id, ts: outcome.ts, status: .attributed, presentation: fact, lapse: lapsed, review: review)
    }

    /// Rule 4.4 for a presentation at `ts` whose latest earlier `capabilities` record is `check`.
    private func eligibility(_ check: Record?, at ts: Int64) -> AttributionRules.Eligibility {
        guard let check, case .capabilities(let decision) = check.body else {
            return AttributionRules.eligibility(check: nil, presentationAt: ts, settings)
        }
        return AttributionRules.eligibility(check: (check.ts, decision), presentationAt: ts, settings)
    }

    /// The later of two records in journal order.
    private func later(_ a: Record?, _ b: Record?) -> Record? {
        guard let a, let b else { return a ?? b }
        return RecordOrder.precedes(a, b) ? b : a
    }

    private func reference(_ record: Record) -> RecordReference { RecordReference(id: record.id, ts: record.ts) }
}
