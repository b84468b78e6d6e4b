/// A conversion together with its commission and qualification time, as reports and exports consume it.
public struct EvaluatedConversion: Sendable, Equatable {
    public var conversion: Conversion
    public var commission: Commission
    /// When it qualifies unless it lapses (rule 4.6: `ts + H`); nil when it is not attributed.
    public var qualifiesAt: Int64?

    public init(conversion: Conversion, commission: Commission, qualifiesAt: Int64?) {
        self.conversion = conversion
        self.commission = commission
        self.qualifiesAt = qualifiesAt
    }

    /// Evaluates `conversion` under `rules` (rules 4.5 and 4.6).
    public init(_ conversion: Conversion, rules: CommissionRules) {
        self.init(
            conversion: conversion, commission: Commission.evaluate(conversion, rules: rules),
            qualifiesAt: conversion.status.isAttributed ? rules.settings.qualifiesAt(conversionAt: conversion.ts) : nil)
    }

    /// Its state seen at `asOf` (rules 4.6 and 4.7); nil when it is not attributed.
    public func state(asOf: Int64) -> QualificationState? {
        guard let qualifiesAt else { return nil }
        if let withheld = withheldState { return withheld }
        return qualifiesAt <= asOf ? .qualified : .pending
    }

    /// `lapsed`, `voided` or `held` when it earns nothing whatever the time (rules 4.6 and 4.7); nil when it is
    /// attributed and earns its amount once qualified, or when it is not attributed.
    public var withheldState: QualificationState? {
        guard qualifiesAt != nil else { return nil }
        if conversion.lapse != nil { return .lapsed }
        return Self.reviewedState(review: conversion.review?.decision, heldByRule: commission.heldByRule)
    }

    /// Rule 4.7 for a conversion that did not lapse: `voided`, `held`, or nil when neither.
    public static func reviewedState(review: ReviewDecision?, heldByRule: Bool) -> QualificationState? {
        switch review {
        case .void?: .voided
        case .hold?: .held
        case .release?: nil
        case nil: heldByRule ? .held : nil
        }
    }
}
