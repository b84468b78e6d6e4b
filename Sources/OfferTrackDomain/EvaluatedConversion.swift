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
        return AttributionRules.state(
            lapsed: conversion.lapse != nil, review: conversion.review?.decision, heldByRule: commission.heldByRule,
            qualifiesAt: qualifiesAt, asOf: asOf)
    }

    /// `lapsed`, `voided` or `held` when it earns nothing whatever the time (rules 4.6 and 4.7); nil when it is
    /// attributed and earns its amount once qualified, or when it is not attributed.
    public var withheldState: QualificationState? {
        guard qualifiesAt != nil else { return nil }
        if conversion.lapse != nil { return .lapsed }
        return AttributionRules.reviewedState(review: conversion.review?.decision, heldByRule: commission.heldByRule)
    }
}
