/// Why a conversion is not attributed (SPEC rules 4.0, 4.2–4.4).
public enum UnattributedReason: String, Sendable, Equatable, CaseIterable {
    /// The user is a shared id (rule 4.0): rules 2–7 are not applied.
    case sharedUser = "shared_user"
    /// No loaded presentation before the conversion.
    case noPresentation = "no_presentation"
    /// The candidate presentation is more than W before the conversion.
    case outsideWindow = "outside_window"
    /// No `capabilities` record at most F old before the candidate presentation.
    case eligibilityUnknown = "eligibility_unknown"
    /// The fresh `capabilities` record decided something other than `eligible`.
    case notEligible = "not_eligible"
}
