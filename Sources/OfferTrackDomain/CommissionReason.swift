/// Why a conversion earns nothing (SPEC rules 4.0, 4.2–4.5); nil on a `Commission` paid by a rule.
public enum CommissionReason: String, Sendable, Equatable, CaseIterable {
    case sharedUser = "shared_user"
    case noPresentation = "no_presentation"
    case outsideWindow = "outside_window"
    case eligibilityUnknown = "eligibility_unknown"
    case notEligible = "not_eligible"
    /// Attributed, but the presentation had no affiliate token.
    case noAffiliate = "no_affiliate"
    /// Attributed with an affiliate token, but no commission rule matched.
    case noRule = "no_rule"

    /// The commission reason of an unattributed conversion.
    public init(_ reason: UnattributedReason) {
        switch reason {
        case .sharedUser: self = .sharedUser
        case .noPresentation: self = .noPresentation
        case .outsideWindow: self = .outsideWindow
        case .eligibilityUnknown: self = .eligibilityUnknown
        case .notEligible: self = .notEligible
        }
    }
}
