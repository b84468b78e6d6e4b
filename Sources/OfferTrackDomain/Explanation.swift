/// Why one user's conversion earned what it did (`offertrack explain`, SPEC section 6): every record rules 4.1–4.6
/// looked at, the review rule 4.7 applied, and the verdict, seen at `asOf`.
public struct Explanation: Sendable, Equatable {
    /// The eligibility check rule 4.4 looked at: the user's latest `capabilities` record before the candidate.
    public struct EligibilityCheck: Sendable, Equatable {
        public var record: RecordReference
        public var decision: EligibilityDecision
    }

    /// `none` without a conversion, else whether rules 4.2–4.4 attributed it.
    public enum Status: String, Sendable, Equatable {
        case none
        case attributed
        case unattributed
    }

    public let user: String
    /// How many records the user has.
    public let records: Int
    /// Rule 4.1: the first `subscribed` outcome.
    public let conversion: RecordReference?
    /// Rule 4.2's candidate presentation, and its offer.
    public let presentation: PresentationFact?
    /// Whether the conversion named the candidate by `offerId` (else it is the latest loaded one before it).
    public let presentationNamed: Bool
    public let eligibility: EligibilityCheck?
    /// Rule 4.3: whether the conversion is inside the window of its candidate; nil without a candidate.
    public let inWindow: Bool?
    /// Rule 4.4's verdict on the candidate; nil without one.
    public let eligibilityVerdict: AttributionRules.Eligibility?
    /// Rule 4.6: whether the holding period is over at `asOf`; nil unless attributed.
    public let holdingOver: Bool?
    /// Rule 4.6: the first lapse record within the holding period.
    public let lapse: RecordReference?
    /// Rule 4.7: the conversion's review, attributed or not.
    public let review: ConversionReview?
    /// The review's `note`, when it has one.
    public let reviewNote: String?
    /// Whether the rule that set the amount holds it (`"hold": true`, rule 4.7).
    public let heldByRule: Bool
    /// Section 11: the erasure that named this user (`erased:<its id>`), when one did.
    public let erasure: ErasureReference?
    /// The ids of later `subscribed` outcomes, in journal order.
    public let repeats: [String]
    public let status: Status
    /// Rule 4's reason when it earns nothing by rules 4.2–4.5; nil when a rule set its amount or there is no
    /// conversion.
    public let reason: CommissionReason?
    /// Rule 4.5's amount (0 unless attributed).
    public let amountMinor: Int64
    /// The index in the rules file of the rule that set the amount.
    public let rule: Int?
    /// `t + H` when attributed.
    public let qualifiesAt: Int64?
    /// At `asOf`, when attributed.
    public let state: QualificationState?
    public let asOf: Int64
    /// The rules the verdict was reached under.
    public let rules: CommissionRules

    /// Whether the explanation names the record `id` (its conversion, presentation, eligibility record, lapse,
    /// review, erasure or a repeat): `explain --id` of a sealed record answers only then (SPEC 12).
    public func names(recordId id: String) -> Bool {
        let named = [
            conversion?.id, presentation?.id, eligibility?.record.id, lapse?.id, review?.record.id,
            erasure?.record.id,
        ]
        return named.contains { $0.map { ExactString.equals($0, id) } ?? false }
            || repeats.contains { ExactString.equals($0, id) }
    }

    /// Explains `user` from all of their records (any order) under `rules`, seen at `asOf`; `sealedRecords` of
    /// theirs were removed by sealing (SPEC 12), which kept every record the rules read.
    public init(user: String, userRecords: [Record], sealedRecords: Int = 0, rules: CommissionRules, asOf: Int64) {
        let ordered = userRecords.sorted(by: RecordOrder.precedes)
        let attribution = Attribution.attribute(userRecords: ordered, settings: rules.settings)
        self.user = user
        self.records = ordered.count + sealedRecords
        self.asOf = asOf
        self.rules = rules
        erasure =
            ordered.lazy.compactMap { record -> ErasureReference? in
                guard case .erasure(let ticket) = record.body,
                    ExactString.equals(user, Erasure.name(erasureID: record.id))
                else { return nil }
                return ErasureReference(record: RecordReference(id: record.id, ts: record.ts), ticket: ticket)
            }.first
        guard let converted = attribution.conversion else {
            (conversion, presentation, presentationNamed, eligibility, lapse, repeats) = (nil, nil, false, nil, nil, [])
            (inWindow, eligibilityVerdict, holdingOver) = (nil, nil, nil)
            (review, reviewNote, heldByRule) = (nil, nil, false)
            (status, reason, amountMinor, rule, qualifiesAt, state) = (.none, nil, 0, nil, nil, nil)
            return
        }
        let evaluated = EvaluatedConversion(converted, rules: rules)
        conversion = RecordReference(id: converted.id, ts: converted.ts)
        presentation = converted.presentation
        lapse = converted.lapse
        review = converted.review
        heldByRule = evaluated.commission.heldByRule
        var note: String?
        var named = false
        var repeats: [String] = []
        var check: EligibilityCheck?
        let candidate = converted.presentation.map { Self.orderKey(of: $0, user: user) }
        for record in ordered {
            switch record.body {
            case .capabilities(let decision):
                if let candidate, RecordOrder.precedes(record, candidate) {
                    check = EligibilityCheck(record: RecordReference(id: record.id, ts: record.ts), decision: decision)
                }
            case .outcome(subscribed: true, _, let offerId):
                // The conversion is the first subscribed outcome: every other one is a later repeat.
                guard record.id.utf8.elementsEqual(converted.id.utf8) else {
                    repeats.append(record.id)
                    continue
                }
                if let offerId, let id = converted.presentation?.id { named = id.utf8.elementsEqual(offerId.utf8) }
            case .review(let decision):
                if let review = converted.review, record.id.utf8.elementsEqual(review.record.id.utf8) {
                    note = decision.note
                }
            case .outcome, .presented, .erasure:
                continue
            }
        }
        reviewNote = note
        presentationNamed = named
        self.repeats = repeats
        eligibility = check
        let settings = rules.settings
        inWindow = converted.presentation.map {
            AttributionRules.isInWindow(conversionAt: converted.ts, presentationAt: $0.ts, settings)
        }
        eligibilityVerdict = converted.presentation.map {
            AttributionRules.eligibility(
                check: check.map { ($0.record.ts, $0.decision) }, presentationAt: $0.ts, settings)
        }
        holdingOver = evaluated.qualifiesAt.map { AttributionRules.isHoldingOver(qualifiesAt: $0, asOf: asOf) }
        status = converted.status.isAttributed ? .attributed : .unattributed
        reason = evaluated.commission.reason
        amountMinor = evaluated.commission.amountMinor
        rule = evaluated.commission.rule
        qualifiesAt = evaluated.qualifiesAt
        state = evaluated.state(asOf: asOf)
    }

    /// A record standing for the candidate presentation's place in journal order.
    private static func orderKey(of candidate: PresentationFact, user: String) -> Record {
        Record(id: candidate.id, ts: candidate.ts, user: user, body: .presented(candidate.offer, loaded: true))
    }
}
