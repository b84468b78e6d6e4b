/// Aggregates the funnel report (SPEC section 6) from facts, single counts or pre-aggregated partial rows.
public struct ReportAccumulator: Sendable {
    private var rowsByKey: [ExactString?: ReportRow] = [:]

    public init() {}

    /// Counts one loaded presentation under `presentationKey`.
    public mutating func add(presentationKey: String?, eligible: Bool) {
        merge(ReportRow(key: presentationKey, presented: 1, presentedEligible: eligible ? 1 : 0))
    }

    /// Counts one conversion under `conversionKey`; `amountMinor` is added only when it is attributed.
    public mutating func add(conversionKey: String?, attributed: Bool, amountMinor: Int64) {
        merge(
            ReportRow(
                key: conversionKey,
                conversions: 1,
                attributed: attributed ? 1 : 0,
                commissionMinor: attributed ? amountMinor : 0
            )
        )
    }

    /// Adds a partial row's counts to the row with the same key (keys compared by exact scalars).
    public mutating func merge(_ row: ReportRow) {
        let key = row.key.map(ExactString.init)
        var current = rowsByKey[key] ?? ReportRow(key: row.key)
        current.presented += row.presented
        current.presentedEligible += row.presentedEligible
        current.conversions += row.conversions
        current.attributed += row.attributed
        current.commissionMinor += row.commissionMinor
        rowsByKey[key] = current
    }

    /// Counts a presentation when its `ts` is in `range`.
    public mutating func add(_ presentation: PresentationFact, grouping: ReportGrouping, range: ReportRange) {
        guard range.contains(presentation.ts) else { return }
        add(presentationKey: grouping.key(presentation: presentation), eligible: presentation.eligible)
    }

    /// Counts a conversion when its `ts` is in `range`.
    public mutating func add(_ evaluated: EvaluatedConversion, grouping: ReportGrouping, range: ReportRange) {
        let conversion = evaluated.conversion
        guard range.contains(conversion.ts) else { return }
        add(
            conversionKey: grouping.key(conversion: conversion),
            attributed: conversion.status.isAttributed,
            amountMinor: evaluated.commission.amountMinor
        )
    }

    /// The listed rows (at least one presentation or conversion), sorted by the key's UTF-8 bytes, nil last.
    public func rows() -> [ReportRow] {
        rowsByKey.values.filter(\.isListed).sorted { lhs, rhs in
            switch (lhs.key, rhs.key) {
            case (let l?, let r?): RecordOrder.idPrecedes(l, r)
            case (_?, nil): true
            default: false
            }
        }
    }

    /// The report of `presentations` and `conversions` grouped by `grouping` within `range`.
    public static func build(
        presentations: some Sequence<PresentationFact>,
        conversions: some Sequence<EvaluatedConversion>,
        grouping: ReportGrouping,
        range: ReportRange = .all
    ) -> [ReportRow] {
        var accumulator = ReportAccumulator()
        for presentation in presentations { accumulator.add(presentation, grouping: grouping, range: range) }
        for conversion in conversions { accumulator.add(conversion, grouping: grouping, range: range) }
        return accumulator.rows()
    }
}
