/// Where an attributed conversion stands when seen at some time (rules 4.6 and 4.7): exactly one of these.
public enum QualificationState: String, Sendable, Equatable, CaseIterable {
    /// Not lapsed, voided or held, and the holding period is over: it earns its amount.
    case qualified
    /// Not lapsed, voided or held, and the holding period is not over.
    case pending
    /// A lapse record within the holding period: it earns nothing (whatever its review says).
    case lapsed
    /// Its review decides `void`: it earns nothing.
    case voided
    /// Its review decides `hold`, or it has no review and the rule that set its amount holds: it earns nothing
    /// while held.
    case held
}
