/// An operator's decision on one conversion (SPEC 3.4).
public enum ReviewDecision: String, Sendable, Equatable, CaseIterable {
    /// It earns nothing.
    case void
    /// It is not paid until released.
    case hold
    /// The operator's earlier decision, and a rule's hold, no longer apply.
    case release

    /// Whether a `reason` must be given with this decision (`void` and `hold`).
    public var requiresReason: Bool { self != .release }
}

/// Why an operator voided or held a conversion (SPEC 3.4).
public enum ReviewReason: String, Sendable, Equatable, CaseIterable {
    case fraud
    case refund
    case duplicate
    case test
    case policy
    /// The affiliate network rejected the conversion (found by `offertrack reconcile`, SPEC 13).
    case networkRejected = "network_rejected"
    case other
}

/// What a `review` record says (SPEC 3.4), after validation.
public struct Review: Sendable, Equatable {
    /// The `id` of the `subscription.outcome` under review.
    public var conversion: String
    public var decision: ReviewDecision
    public var reason: ReviewReason?
    /// The operator's free text, 1–500 characters.
    public var note: String?

    /// The longest note, in Unicode scalars.
    public static let maximumNoteLength = 500

    public init(conversion: String, decision: ReviewDecision, reason: ReviewReason?, note: String?) {
        self.conversion = conversion
        self.decision = decision
        self.reason = reason
        self.note = note
    }
}

/// A conversion's review (rule 4.7): the latest `review` record naming it, by `(ts, id)`.
public struct ConversionReview: Sendable, Equatable {
    /// The review record's `id` and `ts`.
    public var record: RecordReference
    public var decision: ReviewDecision
    public var reason: ReviewReason?

    public init(record: RecordReference, decision: ReviewDecision, reason: ReviewReason?) {
        self.record = record
        self.decision = decision
        self.reason = reason
    }
}
