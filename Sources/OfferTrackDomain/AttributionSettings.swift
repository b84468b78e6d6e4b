/// The configured windows of SPEC section 4, in milliseconds.
public struct AttributionSettings: Sendable, Equatable {
    /// Attribution window W: a conversion at most this long after its presentation is attributable.
    public var windowMs: Int64
    /// Eligibility freshness F: a capabilities check at most this old at the presentation counts.
    public var freshnessMs: Int64
    /// Holding period H (rule 4.6): an attributed conversion lapses on a lapse record within H after it, and
    /// otherwise qualifies H after it. 0: nothing lapses and every attributed conversion qualifies at once.
    public var holdingMs: Int64
    /// Rule 4.0: the users whose conversions are never attributed.
    public var sharedUsers: SharedUsers

    /// The SPEC defaults: W = 720 h, F = 24 h, H = 0, the SPEC's default shared users.
    public static let defaults = AttributionSettings(windowMs: 720 * 3_600_000, freshnessMs: 24 * 3_600_000)

    public init(windowMs: Int64, freshnessMs: Int64, holdingMs: Int64 = 0, sharedUsers: SharedUsers = .defaults) {
        self.windowMs = windowMs
        self.freshnessMs = freshnessMs
        self.holdingMs = holdingMs
        self.sharedUsers = sharedUsers
    }

    /// When a conversion at `ts` qualifies if it does not lapse: `ts + H` (saturating at the largest instant).
    public func qualifiesAt(conversionAt ts: Int64) -> Int64 {
        let (sum, overflow) = ts.addingReportingOverflow(holdingMs)
        return overflow ? .max : sum
    }
}
