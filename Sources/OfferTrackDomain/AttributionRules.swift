/// SPEC section 4's rules, each decided in one place. The reference (`Attribution.attribute`), the journal's
/// bounded path (`BoundedRefresh`, which finds the records by index lookups) and `explain` (`Explanation`, whose
/// text and JSON render what these functions decided) all call them: a rule changes here and nowhere else.
///
/// What differs between the paths is how they find the records a rule looks at (a scan of the whole history, an
/// index lookup); what a rule decides about them is here.
public enum AttributionRules {
    /// Rule 4.0: whether `user` names no single person (the rules' `sharedUsers`, ASCII case ignored).
    public static func isShared(_ user: String, _ settings: AttributionSettings) -> Bool {
        settings.sharedUsers.contains(user)
    }

    /// Rule 4.2: the candidate presentation: the one the conversion's `offerId` names when that is a loaded
    /// presentation of the user before the conversion (`named`, nil otherwise), else the latest loaded one before it.
    public static func candidate<Presentation>(named: Presentation?, latest: Presentation?) -> Presentation? {
        named ?? latest
    }

    /// Rule 4.3: whether a conversion at `conversionAt` is at most W after its candidate at `presentationAt`.
    public static func isInWindow(conversionAt: Int64, presentationAt: Int64, _ settings: AttributionSettings)
        -> Bool
    {
        conversionAt - presentationAt <= settings.windowMs
    }

    /// Rule 4.4's verdict on one presentation.
    public enum Eligibility: Sendable, Equatable {
        /// The latest check before it is at most F old and decided `eligible`.
        case passes
        /// The latest check is at most F old and decided something else: `not_eligible`.
        case notEligible
        /// No check before it, or the latest is older than F: `eligibility_unknown`.
        case unknown

        /// The reason it leaves a conversion unattributed; nil when it passes.
        public var failure: UnattributedReason? {
            switch self {
            case .passes: nil
            case .notEligible: .notEligible
            case .unknown: .eligibilityUnknown
            }
        }
    }

    /// Whether a check at `checkAt` is fresh at a presentation at `presentationAt` (at most F before it).
    public static func isFresh(checkAt: Int64, presentationAt: Int64, _ settings: AttributionSettings) -> Bool {
        presentationAt - checkAt <= settings.freshnessMs
    }

    /// Rule 4.4 for a presentation at `presentationAt` whose latest earlier `capabilities` record is `check`.
    public static func eligibility(
        check: (ts: Int64, decision: EligibilityDecision)?, presentationAt: Int64, _ settings: AttributionSettings
    ) -> Eligibility {
        guard let check, isFresh(checkAt: check.ts, presentationAt: presentationAt, settings) else { return .unknown }
        return check.decision == .eligible ? .passes : .notEligible
    }

    /// Rules 4.2–4.4 for a conversion at `conversionAt` of a user who is not shared: no candidate is
    /// `no_presentation`; then the window (4.3), then the candidate's eligibility (4.4).
    public static func status(
        conversionAt: Int64, candidate: (ts: Int64, eligibility: Eligibility)?, _ settings: AttributionSettings
    ) -> ConversionStatus {
        guard let candidate else { return .unattributed(.noPresentation) }
        guard isInWindow(conversionAt: conversionAt, presentationAt: candidate.ts, settings) else {
            return .unattributed(.outsideWindow)
        }
        return candidate.eligibility.failure.map { .unattributed($0) } ?? .attributed
    }

    /// Rule 4.6: whether a record with `body` is a lapse record: an authorized check without playback (`eligible`
    /// or `ineligible`), or a `declined` outcome, given or derived.
    public static func isLapse(_ body: RecordBody) -> Bool {
        switch body {
        case .capabilities(let decision): decision == .eligible || decision == .ineligible
        case .outcome(let subscribed, _, _): !subscribed
        case .presented, .review, .erasure: false
        }
    }

    /// Rule 4.6: whether a lapse record at `ts` falls in the holding period of a conversion at `conversionAt`
    /// (`t < ts <= t + H`).
    public static func isInHoldingPeriod(_ ts: Int64, conversionAt: Int64, _ settings: AttributionSettings) -> Bool {
        ts > conversionAt && ts <= settings.qualifiesAt(conversionAt: conversionAt)
    }

    /// Rule 4.7 for an attributed conversion that did not lapse: `voided`, `held` (by its review, or by the rule
    /// that set its amount when it has no review), or nil when neither; a `release` lifts both kinds of hold.
    public static func reviewedState(review: ReviewDecision?, heldByRule: Bool) -> QualificationState? {
        switch review {
        case .void?: .voided
        case .hold?: .held
        case .release?: nil
        case nil: heldByRule ? .held : nil
        }
    }

    /// Rules 4.6 and 4.7: the state at `asOf` of an attributed conversion qualifying at `qualifiesAt` unless it
    /// lapsed.
    public static func state(
        lapsed: Bool, review: ReviewDecision?, heldByRule: Bool, qualifiesAt: Int64, asOf: Int64
    ) -> QualificationState {
        if lapsed { return .lapsed }
        if let withheld = reviewedState(review: review, heldByRule: heldByRule) { return withheld }
        return isHoldingOver(qualifiesAt: qualifiesAt, asOf: asOf) ? .qualified : .pending
    }

    /// Rule 4.6: whether the holding period of a conversion qualifying at `qualifiesAt` is over at `asOf`.
    public static func isHoldingOver(qualifiesAt: Int64, asOf: Int64) -> Bool {
        qualifiesAt <= asOf
    }
}
