/// Where an attributed conversion stands in its holding period when seen at some time (rule 4.6).
public enum QualificationState: String, Sendable, Equatable, CaseIterable {
    /// No lapse record within the holding period, and the period is over: it earns its amount.
    case qualified
    /// No lapse record yet, and the holding period is not over.
    case pending
    /// A lapse record within the holding period: it earns nothing.
    case lapsed
}
