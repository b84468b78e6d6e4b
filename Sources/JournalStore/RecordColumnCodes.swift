import OfferTrackDomain

/// How a record's body is stored in the `records` table's decoded columns.
package enum RecordColumnCodes {
    static func typeCode(_ type: RecordType) -> Int64 {
        switch type {
        case .capabilities: 0
        case .offerPresented: 1
        case .subscriptionOutcome: 2
        case .review: 3
        case .erasure: 4
        }
    }

    /// Whether records of a type code are sealed with their day (SPEC 12): all but reviews and erasures.
    static func isSealable(_ code: Int64) -> Bool {
        type(code: code).map { $0 != .review && $0 != .erasure } ?? false
    }

    static func type(code: Int64) -> RecordType? {
        switch code {
        case 0: .capabilities
        case 1: .offerPresented
        case 2: .subscriptionOutcome
        case 3: .review
        case 4: .erasure
        default: nil
        }
    }

    package static func decisionCode(_ decision: EligibilityDecision) -> Int64 {
        switch decision {
        case .unauthorized: 0
        case .subscriber: 1
        case .eligible: 2
        case .ineligible: 3
        }
    }

    static func decision(code: Int64) -> EligibilityDecision? {
        switch code {
        case 0: .unauthorized
        case 1: .subscriber
        case 2: .eligible
        case 3: .ineligible
        default: nil
        }
    }

    package static func reviewDecisionCode(_ decision: ReviewDecision) -> Int64 {
        switch decision {
        case .void: 1
        case .hold: 2
        case .release: 3
        }
    }

    package static func reviewDecision(code: Int64) -> ReviewDecision? {
        switch code {
        case 1: .void
        case 2: .hold
        case 3: .release
        default: nil
        }
    }
}
