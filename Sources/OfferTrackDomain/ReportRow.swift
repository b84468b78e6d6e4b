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
    /// Of the attributed ones, those that lapsed (rule 4.6).
    public var lapsed: Int
    /// Of the attributed ones, those voided by their review (rule 4.7).
    public var voided: Int
    /// Of the attributed ones, those held by their review or their rule (rule 4.7).
    public var held: Int
    /// Of the attributed ones, those pending at the report's `asOf`.
    public var pending: Int
    /// The summed amount of the attributed conversions that qualified by `asOf`, in minor units.
    public var commissionMinor: Int64
    /// The summed amount of the pending ones, in minor units.
    public var pendingCommissionMinor: Int64
    /// The summed amount of the held ones, in minor units.
    public var heldCommissionMinor: Int64

    public init(
        key: String?,
        presented: Int = 0,
        presentedEligible: Int = 0,
        conversions: Int = 0,
        attributed: Int = 0,
        lapsed: Int = 0,
        voided: Int = 0,
        held: Int = 0,
        pending: Int = 0,
        commissionMinor: Int64 = 0,
        pendingCommissionMinor: Int64 = 0,
        heldCommissionMinor: Int64 = 0
    ) {
        self.key = key
        self.presented = presented
        self.presentedEligible = presentedEligible
        self.conversions = conversions
        self.attributed = attributed
        self.lapsed = lapsed
        self.voided = voided
        self.held = held
        self.pending = pending
        self.commissionMinor = commissionMinor
        self.pendingCommissionMinor = pendingCommissionMinor
        self.heldCommissionMinor = heldCommissionMinor
    }

    /// Whether the row counts at least one presentation or conversion, and so is listed.
    public var isListed: Bool { presented > 0 || conversions > 0 }

    /// Adds `other`'s counts to this row's (the key stays); the amounts with checked arithmetic (on overflow
    /// nothing changes).
    public mutating func add(_ other: ReportRow) throws(MoneyOverflow) {
        let commission = try Money.sum(commissionMinor, other.commissionMinor)
        let pendingCommission = try Money.sum(pendingCommissionMinor, other.pendingCommissionMinor)
        let heldCommission = try Money.sum(heldCommissionMinor, other.heldCommissionMinor)
        presented += other.presented
        presentedEligible += other.presentedEligible
        conversions += other.conversions
        attributed += other.attributed
        lapsed += other.lapsed
        voided += other.voided
        held += other.held
        pending += other.pending
        commissionMinor = commission
        pendingCommissionMinor = pendingCommission
        heldCommissionMinor = heldCommission
    }

    /// The rows' counts and amounts added up under `key`; `MoneyOverflow` when an amount's sum does not fit.
    public static func total(of rows: [ReportRow], key: String?) throws(MoneyOverflow) -> ReportRow {
        var total = ReportRow(key: key)
        for row in rows { try total.add(row) }
        return total
    }

    /// Attributed conversions that qualified by the report's `asOf`: neither lapsed, voided, held nor pending.
    public var qualified: Int { attributed - lapsed - voided - held - pending }
}
