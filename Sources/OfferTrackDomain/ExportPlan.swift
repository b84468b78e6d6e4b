/// The nightly export of one day (SPEC section 7): its rows, and the rows in force afterwards.
///
/// `inForce` maps each published day to the row currently in force for each of its conversions (keyed by the
/// conversion id's bytes). The plan adds day D's `commission` rows, and for every published day whose computed
/// rows differ from those in force, a reversal of the row in force and the row computed now (`adjustment`).
public struct ExportPlan: Sendable {
    /// One line of the export.
    public struct Line: Sendable, Equatable {
        public enum Kind: String, Sendable {
            case commission
            case adjustment
        }

        public var kind: Kind
        public var row: CommissionRow
        /// A reversal carries the row in force with its amount negated.
        public var isReversal: Bool
        /// The published day an adjustment corrects; nil for commission rows.
        public var originalDate: String?

        public init(kind: Kind, row: CommissionRow, isReversal: Bool, originalDate: String?) {
            self.kind = kind
            self.row = row
            self.isReversal = isReversal
            self.originalDate = originalDate
        }

        public var signedAmount: Int64 { isReversal ? 0 - row.amountMinor : row.amountMinor }
    }

    public let day: String
    public let lines: [Line]
    /// How the rows in force change with this export: each (day, conversion) whose row is added, replaced or
    /// withdrawn (`row` nil).
    public let changes: [LedgerChange]

    /// One change to the rows in force.
    public struct LedgerChange: Sendable, Equatable {
        public var day: String
        public var conversionId: String
        public var row: CommissionRow?
    }

    /// Plans the export of `day`. `current` holds the rows computed now for `day` and every published day
    /// (grouped by the UTC day on which each conversion qualifies, rule 4.6); `inForce` the rows in force before
    /// this export.
    public init(day: String, current: [String: [CommissionRow]], inForce: [String: [ExactString: CommissionRow]]) {
        self.day = day
        var lines: [Line] = []
        var changes: [LedgerChange] = []
        for publishedDay in inForce.keys.sorted(by: RecordOrder.idPrecedes) {
            let previous = inForce[publishedDay] ?? [:]
            let rows = current[publishedDay] ?? []
            var now: [ExactString: CommissionRow] = Dictionary(minimumCapacity: rows.count)
            for row in rows { now[ExactString(row.conversionId)] = row }
            for id in Set(previous.keys).union(now.keys) {
                let before = previous[id]
                let after = now[id]
                if let before, let after, before.isSameRow(as: after) { continue }
                if let before {
                    lines.append(Line(kind: .adjustment, row: before, isReversal: true, originalDate: publishedDay))
                }
                if let after {
                    lines.append(Line(kind: .adjustment, row: after, isReversal: false, originalDate: publishedDay))
                }
                let conversionId = after?.conversionId ?? before?.conversionId ?? ""
                changes.append(LedgerChange(day: publishedDay, conversionId: conversionId, row: after))
            }
        }
        let today = current[day] ?? []
        lines.reserveCapacity(lines.count + today.count)
        changes.reserveCapacity(changes.count + today.count)
        for row in today {
            lines.append(Line(kind: .commission, row: row, isReversal: false, originalDate: nil))
            changes.append(LedgerChange(day: day, conversionId: row.conversionId, row: row))
        }
        self.lines = lines.sorted(by: Self.precedes)
        self.changes = changes
    }

    /// SPEC order: `converted_at`, then `conversion_id` bytes, then a reversal before the row replacing it.
    static func precedes(_ lhs: Line, _ rhs: Line) -> Bool {
        if lhs.row.convertedAt != rhs.row.convertedAt { return lhs.row.convertedAt < rhs.row.convertedAt }
        if !lhs.row.conversionId.utf8.elementsEqual(rhs.row.conversionId.utf8) {
            return RecordOrder.idPrecedes(lhs.row.conversionId, rhs.row.conversionId)
        }
        if lhs.isReversal != rhs.isReversal { return lhs.isReversal }
        // The same conversion corrected for two published days cannot happen (its day is fixed); keep stable.
        return (lhs.originalDate ?? "") < (rhs.originalDate ?? "")
    }

    /// The sums of the signed amounts of the `commission` lines and of the `adjustment` lines, with checked
    /// arithmetic.
    public func totals() throws(MoneyOverflow) -> (commissionMinor: Int64, adjustmentMinor: Int64) {
        try Self.totals(of: lines)
    }

    /// The same sums over any `lines` (a part of a day's, in a split journal).
    public static func totals(
        of lines: some Sequence<Line>
    ) throws(MoneyOverflow) -> (commissionMinor: Int64, adjustmentMinor: Int64) {
        var commission: Int64 = 0
        var adjustment: Int64 = 0
        for line in lines {
            switch line.kind {
            case .commission: commission = try Money.sum(commission, line.signedAmount)
            case .adjustment: adjustment = try Money.sum(adjustment, line.signedAmount)
            }
        }
        return (commission, adjustment)
    }
}
