/// Aggregates the funnel report (SPEC section 6) from facts, single counts or pre-aggregated partial rows.
///
/// Amounts add up with checked arithmetic: a sum that overflows is remembered and `rows()` throws, so no caller
/// has to check each addition and no report ever shows a wrapped amount.
public struct ReportAccumulator: Sendable {
    private var rowsByKey: [ExactString?: ReportRow] = [:]
    /// Whether some sum of money did not fit.
    private var overflowed = false
    /// The time conversions are seen at: what qualified by then, what is pending then (rule 4.6).
    public let asOf: Int64

    /// `asOf` defaults to the end of time, when every attributed conversion that did not lapse has qualified.
    public init(asOf: Int64 = .max) {
        self.asOf = asOf
    }

    /// Counts one loaded presentation under `presentationKey`.
    public mutating func add(presentationKey: String?, eligible: Bool) {
        merge(ReportRow(key: presentationKey, presented: 1, presentedEligible: eligible ? 1 : 0))
    }

    /// Counts `count` conversions under `conversionKey`; `state` is nil for unattributed ones, and
    /// `amountMinor` (each one's) counts as commission when qualified, as pending commission when pending, as
    /// held commission when held.
    public mutating func add(
        conversionKey: String?, state: QualificationState?, amountMinor: Int64, count: Int = 1
    ) {
        guard let total = try? Money.product(amountMinor, count) else {
            overflowed = true
            return
        }
        merge(
            ReportRow(
                key: conversionKey,
                conversions: count,
                attributed: state == nil ? 0 : count,
                lapsed: state == .lapsed ? count : 0,
                voided: state == .voided ? count : 0,
                held: state == .held ? count : 0,
                pending: state == .pending ? count : 0,
                commissionMinor: state == .qualified ? total : 0,
                pendingCommissionMinor: state == .pending ? total : 0,
                heldCommissionMinor: state == .held ? total : 0
            )
        )
    }

    /// Adds a partial row's counts to the row with the same key (keys compared by exact scalars).
    public mutating func merge(_ row: ReportRow) {
        let key = row.key.map(ExactString.init)
        var current = rowsByKey[key] ?? ReportRow(key: row.key)
        do {
            try current.add(row)
        } catch {
            overflowed = true
        }
        rowsByKey[key] = current
    }

    /// Counts a presentation when its `ts` is in `range`.
    public mutating func add(_ presentation: PresentationFact, grouping: ReportGrouping, range: ReportRange) {
        guard range.contains(presentation.ts) else { return }
        add(presentationKey: grouping.key(presentation: presentation), eligible: presentation.eligible)
    }

    /// Counts a conversion, seen at `asOf`, when its `ts` is in `range`.
    public mutating func add(_ evaluated: EvaluatedConversion, grouping: ReportGrouping, range: ReportRange) {
        let conversion = evaluated.conversion
        guard range.contains(conversion.ts) else { return }
        add(
            conversionKey: grouping.key(conversion: conversion),
            state: evaluated.state(asOf: asOf),
            amountMinor: evaluated.commission.amountMinor
        )
    }

    /// The listed rows (at least one presentation or conversion), sorted by the key's UTF-8 bytes, nil last;
    /// `MoneyOverflow` when some sum of money did not fit.
    public func rows() throws(MoneyOverflow) -> [ReportRow] {
        guard !overflowed else { throw MoneyOverflow() }
        return rowsByKey.values.filter(\.isListed).sorted { lhs, rhs in
            switch (lhs.key, rhs.key) {
            case (let l?, let r?): RecordOrder.idPrecedes(l, r)
            case (_?, nil): true
            default: false
            }
        }
    }

    /// The report of `presentations` and `conversions` grouped by `grouping` within `range`, seen at `asOf`.
    public static func build(
        presentations: some Sequence<PresentationFact>,
        conversions: some Sequence<EvaluatedConversion>,
        grouping: ReportGrouping,
        range: ReportRange = .all,
        asOf: Int64 = .max
    ) throws(MoneyOverflow) -> [ReportRow] {
        var accumulator = ReportAccumulator(asOf: asOf)
        for presentation in presentations { accumulator.add(presentation, grouping: grouping, range: range) }
        for conversion in conversions { accumulator.add(conversion, grouping: grouping, range: range) }
        return try accumulator.rows()
    }
}
