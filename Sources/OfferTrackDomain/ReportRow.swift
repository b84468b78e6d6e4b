/// One group of the funnel report (SPEC section 6).
public struct ReportRow: Sendable, Equatable {
    /// The group's value; nil for "none".
    public var key: String?
    /// Loaded presentations in range.
    public var presented: Int
    /// Of those, the ones whose rule 4.4 eligibility check passes.
    public var presentedEligible: Int
    /// Conversions in range.
    public var conversions: Int
    /// Of those, the attributed ones.
    public var attributed: Int
    /// The attributed conversions' summed commission, in minor units.
    public var commissionMinor: Int64

    public init(
        key: String?,
        presented: Int = 0,
        presentedEligible: Int = 0,
        conversions: Int = 0,
        attributed: Int = 0,
        commissionMinor: Int64 = 0
    ) {
        self.key = key
        self.presented = presented
        self.presentedEligible = presentedEligible
        self.conversions = conversions
        self.attributed = attributed
        self.commissionMinor = commissionMinor
    }

    /// Whether the row counts at least one presentation or conversion, and so is listed.
    public var isListed: Bool { presented > 0 || conversions > 0 }
}
