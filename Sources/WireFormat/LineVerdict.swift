import OfferTrackDomain

/// The verdict on one input line: a valid record, or the error answered for it (SPEC section 2).
public enum LineVerdict: Sendable, Equatable {
    /// The line is a record that passed every rule of SPEC sections 2–3.
    case valid(Record)
    /// The line was refused; `id` is the line's `id` when that is a valid id, otherwise nil.
    case rejected(id: String?, RecordError)
}
