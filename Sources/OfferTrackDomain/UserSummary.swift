/// What rules 4.1–4.6 read of a user's journaled records when the records added next all come after it: the
/// latest `capabilities` record, the time of the latest loaded presentation and of the first `subscribed` outcome.
///
/// A returning user's new records usually come after everything journaled of theirs. Then rule 4.4's verdict on
/// each added loaded presentation needs only the latest check before it (the summary's, or an added one), no
/// earlier verdict changes (every earlier presentation is before the added checks), and the conversion, if any,
/// changes only through a review or a lapse in its holding period. `inOrderPresentations` decides those cases from
/// the summary alone, so the join reads nothing of the user's history however long it is; anything else (a record
/// at or before one of the summary's times, a first conversion, a review, a lapse that may count) is left to the
/// full join, which gives the summary after it (`adding`).
public struct UserSummary: Sendable, Equatable {
    /// A `capabilities` record: its place in journal order and its decision.
    public struct Check: Sendable, Equatable {
        public var ts: Int64
        public var id: String
        public var decision: EligibilityDecision

        public init(ts: Int64, id: String, decision: EligibilityDecision) {
            self.ts = ts
            self.id = id
            self.decision = decision
        }
    }

    /// The user's latest `capabilities` record in journal order (rule 4.4's check for any later presentation).
    public var latestCheck: Check?
    /// The time of the user's latest loaded presentation: a check after it changes no earlier verdict.
    public var latestLoadedPresentationTs: Int64?
    /// The time of the user's first `subscribed` outcome (rule 4.1's conversion); nil when they have none.
    public var firstSubscribedTs: Int64?

    public init(latestCheck: Check? = nil, latestLoadedPresentationTs: Int64? = nil, firstSubscribedTs: Int64? = nil) {
        self.latestCheck = latestCheck
        self.latestLoadedPresentationTs = latestLoadedPresentationTs
        self.firstSubscribedTs = firstSubscribedTs
    }

    /// The summary of a user with nothing journaled.
    public static let empty = UserSummary()

    /// The summary once `records` (in any order) are journaled beside the records this one summarizes.
    public func adding(_ records: [Record]) -> UserSummary {
        var summary = self
        for record in records {
            switch record.body {
            case .capabilities(let decision):
                if let latest = summary.latestCheck,
                    !RecordOrder.precedes(ts: latest.ts, id: latest.id, ts: record.ts, id: record.id)
                {
                    continue
                }
                summary.latestCheck = Check(ts: record.ts, id: record.id, decision: decision)
            case .presented(_, loaded: true):
                summary.latestLoadedPresentationTs = max(summary.latestLoadedPresentationTs ?? .min, record.ts)
            case .outcome(subscribed: true, _, _):
                summary.firstSubscribedTs = min(summary.firstSubscribedTs ?? .max, record.ts)
            case .presented, .outcome, .review, .erasure:
                continue
            }
        }
        return summary
    }

    /// The derived rows `added` (the user's records a batch journals, in journal order) bring, when the summary
    /// decides all of them: rule 4.4's verdict on each added loaded presentation, with its position in `added`;
    /// every earlier presentation's verdict and the conversion stay as they are. Nil when the full join is needed:
    /// a check, loaded presentation or `subscribed` outcome at or before the latest time the summary holds, a first
    /// `subscribed` outcome, a review or an erasure, or a lapse record in the conversion's holding period.
    public func inOrderPresentations(_ added: [Record], _ settings: AttributionSettings) -> [(
        index: Int, fact: PresentationFact
    )]? {
        let latestTime = max(latestCheck?.ts ?? .min, latestLoadedPresentationTs ?? .min, firstSubscribedTs ?? .min)
        var facts: [(index: Int, fact: PresentationFact)] = []
        var check = latestCheck.map { (ts: $0.ts, decision: $0.decision) }
        for (index, record) in added.enumerated() {
            if let conversionTs = firstSubscribedTs, AttributionRules.isLapse(record.body),
                AttributionRules.isInHoldingPeriod(record.ts, conversionAt: conversionTs, settings)
            {
                return nil
            }
            switch record.body {
            case .capabilities(let decision):
                guard record.ts > latestTime else { return nil }
                check = (record.ts, decision)
            case .presented(let offer, loaded: true):
                guard record.ts > latestTime else { return nil }
                let eligibility = AttributionRules.eligibility(check: check, presentationAt: record.ts, settings)
                facts.append(
                    (
                        index,
                        PresentationFact(id: record.id, ts: record.ts, offer: offer, eligible: eligibility == .passes)
                    ))
            case .outcome(subscribed: true, _, _):
                guard firstSubscribedTs != nil, record.ts > latestTime else { return nil }
            case .presented(_, loaded: false), .outcome(subscribed: false, _, _):
                continue
            case .review, .erasure:
                return nil
            }
        }
        return facts
    }

    /// A check that arrives alone after the summary's latest check, though not after everything the summary holds
    /// (a visit's check committed behind its presentation): once journaled it is the user's latest check, so it
    /// changes rule 4.4's verdict on the loaded presentations after it and on nothing else, provided the user has
    /// no conversion at or after its time (a conversion before it has its candidate, and that one's check, before
    /// it too) and it is no lapse in that conversion's holding period. Returns that check when the summary decides
    /// so, for the join to decide those presentations again (`BoundedRefresh.redecide(afterLatestCheck:)`); nil
    /// when `added` is anything else, the check is not after the summary's, the conversion is at or after it, or
    /// it may lapse the conversion.
    public func lateCheck(_ added: [Record], _ settings: AttributionSettings) -> Record? {
        guard added.count == 1, let check = added.first, case .capabilities = check.body else { return nil }
        if let latest = latestCheck, !RecordOrder.precedes(ts: latest.ts, id: latest.id, ts: check.ts, id: check.id) {
            return nil
        }
        if let conversionTs = firstSubscribedTs {
            guard conversionTs < check.ts else { return nil }
            if AttributionRules.isLapse(check.body),
                AttributionRules.isInHoldingPeriod(check.ts, conversionAt: conversionTs, settings)
            {
                return nil
            }
        }
        return check
    }
}
