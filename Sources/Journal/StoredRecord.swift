import OfferTrackDomain

/// How a record's body is stored in the `records` table's decoded columns.
enum StoredRecord {
    static func typeCode(_ type: RecordType) -> Int64 {
        switch type {
        case .capabilities: 0
        case .offerPresented: 1
        case .subscriptionOutcome: 2
        }
    }

    static func type(code: Int64) -> RecordType? {
        switch code {
        case 0: .capabilities
        case 1: .offerPresented
        case 2: .subscriptionOutcome
        default: nil
        }
    }

    static func decisionCode(_ decision: EligibilityDecision) -> Int64 {
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
}
