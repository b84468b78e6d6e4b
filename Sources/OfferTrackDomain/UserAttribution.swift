/// What SPEC section 4 derives from one user's records.
public struct UserAttribution: Sendable, Equatable {
    /// Every loaded presentation of the user, in `(ts, id)` order.
    public var presentations: [PresentationFact]
    /// The user's conversion, or nil when they never subscribed.
    public var conversion: Conversion?

    public init(presentations: [PresentationFact], conversion: Conversion?) {
        self.presentations = presentations
        self.conversion = conversion
    }
}
