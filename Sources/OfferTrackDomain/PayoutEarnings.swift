/// A month's earnings per affiliate and currency (SPEC 7.1): the sum of `amount_minor` and the count of every row
/// of the month's published export files, commissions and adjustments alike.
public struct PayoutEarnings: Sendable, Equatable {
    /// One pair's sum and row count.
    public struct Earned: Sendable, Equatable {
        public var amountMinor: Int64
        public var rows: Int
    }

    public private(set) var pairs: [PayoutPair: Earned] = [:]

    public init() {}

    /// Adds a pair's amount as one row (checked: an overflowing sum throws).
    public mutating func add(_ pair: PayoutPair, amountMinor: Int64) throws(PayoutError) {
        try add(pair, amountMinor: amountMinor, rows: 1)
    }

    /// Adds the sum of `rows` rows of a pair (checked: an overflowing sum throws).
    public mutating func add(_ pair: PayoutPair, amountMinor: Int64, rows: Int) throws(PayoutError) {
        var earned = pairs[pair] ?? Earned(amountMinor: 0, rows: 0)
        earned.amountMinor = try earned.amountMinor.adding(
            amountMinor, "the earnings of \(pair.affiliateToken) in \(pair.currency)")
        earned.rows += rows
        pairs[pair] = earned
    }
}
