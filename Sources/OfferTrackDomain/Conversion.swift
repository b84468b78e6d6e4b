/// A user's conversion (their first `subscribed` outcome) and the result of rules 4.2–4.4, 4.6 and 4.7.
public struct Conversion: Sendable, Equatable {
    /// The outcome record's `id`.
    public var id: String
    /// The outcome's `ts` (UTC epoch milliseconds).
    public var ts: Int64
    /// Attributed, or unattributed with its reason.
    public var status: ConversionStatus
    /// The candidate presentation (rule 4.2), when there was one, attributed or not.
    public var presentation: PresentationFact?
    /// The first lapse record within the holding period (rule 4.6); only an attributed conversion lapses.
    public var lapse: RecordReference?
    /// Its review (rule 4.7): the user's latest `review` naming it, attributed or not.
    public var review: ConversionReview?

    public init(
        id: String, ts: Int64, status: ConversionStatus, presentation: PresentationFact?,
        lapse: RecordReference? = nil, review: ConversionReview? = nil
    ) {
        self.id = id
        self.ts = ts
        self.status = status
        self.presentation = presentation
        self.lapse = lapse
        self.review = review
    }
}
