/// A UTC calendar month, `YYYY-MM` (SPEC 7.1): the export days one payout statement covers.
public struct PayoutMonth: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// 1 through 9999.
    public let year: Int
    /// 1 through 12.
    public let month: Int

    /// The month `text` names exactly (`2026-11`), or nil.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 7, bytes[4] == UInt8(ascii: "-"), Timestamp.parseDay(text + "-01") != nil,
            let year = Int(text.prefix(4)), let month = Int(text.suffix(2))
        else { return nil }
        self.init(year: year, month: month)
    }

    /// The month of a `YYYY-MM-DD` day, or nil when `day` is not one.
    public init?(containingDay day: String) {
        guard Timestamp.parseDay(day) != nil else { return nil }
        self.init(String(day.prefix(7)))
    }

    private init(year: Int, month: Int) {
        self.year = year
        self.month = month
    }

    public var description: String {
        let digits = String(year)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits + (month < 10 ? "-0" : "-")
            + String(month)
    }

    /// The month before, nil before year 1.
    public var previous: PayoutMonth? {
        if month > 1 { return PayoutMonth(year: year, month: month - 1) }
        return year > 1 ? PayoutMonth(year: year - 1, month: 12) : nil
    }

    /// The month after, nil after year 9999.
    public var next: PayoutMonth? {
        if month < 12 { return PayoutMonth(year: year, month: month + 1) }
        return year < 9999 ? PayoutMonth(year: year + 1, month: 1) : nil
    }

    /// Its first day, `YYYY-MM-01`.
    public var firstDay: String { description + "-01" }

    /// Its last day, `YYYY-MM-DD`.
    public var lastDay: String {
        guard let next, let start = Timestamp.parseDay(next.firstDay) else { return description + "-31" }
        return Timestamp.formatDay(start - Timestamp.millisecondsPerDay)
    }

    /// Its UTC span in epoch milliseconds, from 00:00Z of its first day to 00:00Z of the next month's.
    public var span: Range<Int64> {
        let start = Timestamp.parseDay(firstDay) ?? 0
        let end = Timestamp.parseDay(lastDay).map { $0 + Timestamp.millisecondsPerDay } ?? start
        return start..<end
    }

    /// Whether the `YYYY-MM-DD` day `day` falls in this month.
    public func contains(day: String) -> Bool {
        PayoutMonth(containingDay: day) == self
    }

    public static func < (lhs: PayoutMonth, rhs: PayoutMonth) -> Bool {
        (lhs.year, lhs.month) < (rhs.year, rhs.month)
    }
}
