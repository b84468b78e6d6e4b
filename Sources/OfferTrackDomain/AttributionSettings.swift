/// The configured windows of SPEC section 4, in milliseconds.
public struct AttributionSettings: Sendable, Equatable {
    /// Attribution window W: a conversion at most this long after its presentation is attributable.
    public var windowMs: Int64
    /// Eligibility freshness F: a capabilities check at most this old at the presentation counts.
    public var freshnessMs: Int64

    /// The SPEC defaults: W = 720 h, F = 24 h.
    public static let defaults = AttributionSettings(windowMs: 720 * 3_600_000, freshnessMs: 24 * 3_600_000)

    public init(windowMs: Int64, freshnessMs: Int64) {
        self.windowMs = windowMs
        self.freshnessMs = freshnessMs
    }
}
