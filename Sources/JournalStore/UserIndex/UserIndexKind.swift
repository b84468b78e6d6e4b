import OfferTrackDomain

/// What the per-user index (`by_user`, `by_user_recent`: `k, kind, ts, seq`) says of each record beside its time,
/// so that attribution finds what rules 4.1–4.7 look at by a range read of one kind instead of a user's whole
/// history (schema 11).
package enum UserIndexKind: Int64, CaseIterable, Sendable {
    /// A `capabilities` record deciding `eligible` or `ineligible`: a check, and a lapse record (rule 4.6).
    case lapsingCheck = 0
    /// A `capabilities` record deciding `unauthorized` or `subscriber`.
    case otherCheck = 1
    /// A loaded `offer.presented` (rule 4.2's candidates).
    case loadedPresentation = 2
    /// An `offer.presented` that did not load.
    case unloadedPresentation = 3
    /// A `subscribed` outcome (rule 4.1).
    case subscribed = 4
    /// A `declined` outcome: a lapse record (rule 4.6).
    case declined = 5
    /// A `review` (rule 4.7).
    case review = 6
    /// An `erasure` (SPEC 3.5).
    case erasure = 7

    /// Every `capabilities` record (rule 4.4).
    package static let checks: [UserIndexKind] = [.lapsingCheck, .otherCheck]
    /// Every lapse record (rule 4.6).
    package static let lapses: [UserIndexKind] = [.lapsingCheck, .declined]

    package init(_ body: RecordBody) {
        switch body {
        case .capabilities:
            self = AttributionRules.isLapse(body) ? .lapsingCheck : .otherCheck
        case .presented(_, let loaded): self = loaded ? .loadedPresentation : .unloadedPresentation
        case .outcome(let subscribed, _, _): self = subscribed ? .subscribed : .declined
        case .review: self = .review
        case .erasure: self = .erasure
        }
    }

    /// The kind of the `records` row aliased `r`, in SQL (for migrations, `rebuild` and `verify`); the codes are
    /// `RecordColumnCodes`'.
    package static let sql = """
        CASE r.type WHEN 0 THEN (CASE WHEN r.decision IN (2, 3) THEN 0 ELSE 1 END)
            WHEN 1 THEN (CASE WHEN r.loaded = 1 THEN 2 ELSE 3 END)
            WHEN 2 THEN (CASE WHEN r.subscribed = 1 THEN 4 ELSE 5 END)
            WHEN 3 THEN 6 ELSE 7 END
        """
}
