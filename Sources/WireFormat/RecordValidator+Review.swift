import JSON
import OfferTrackDomain

extension RecordValidator {
    // MARK: - review (SPEC 3.4)

    /// `conversion`, `decision`, `reason` (required for `void` and `hold`), `note`, in the order of the table.
    static func reviewBody(_ fields: Fields) throws(RecordError) -> RecordBody {
        guard let conversionValue = fields.conversion else { throw missing("conversion") }
        guard case .string(let conversion) = conversionValue, isValidID(conversion) else {
            throw invalid(
                "conversion",
                "conversion must be a record id: 1 to 128 characters from A-Z, a-z, 0-9, '.', '_', ':' and '-'")
        }
        guard let decisionValue = fields.decision else { throw missing("decision") }
        guard case .string(let decisionName) = decisionValue, let decision: ReviewDecision = named(decisionName) else {
            throw invalid("decision", "decision must be void, hold or release")
        }
        var reason: ReviewReason?
        if let value = fields.reason {
            guard case .string(let name) = value, let known: ReviewReason = named(name) else {
                throw invalid(
                    "reason", "reason must be fraud, refund, duplicate, test, policy, network_rejected or other")
            }
            reason = known
        } else if decision.requiresReason {
            throw RecordError(
                .missingField, "reason is required when decision is \(decision.rawValue)", field: "reason")
        }
        var note: String?
        if let value = fields.note { note = try text(value, field: "note", maximumLength: Review.maximumNoteLength) }
        return .review(Review(conversion: conversion, decision: decision, reason: reason, note: note))
    }

    /// The case whose raw value is exactly `name` (compared by bytes).
    static func named<Case: CaseIterable & RawRepresentable<String>>(_ name: String) -> Case? {
        Case.allCases.first { ExactString.equals(name, $0.rawValue) }
    }
}
