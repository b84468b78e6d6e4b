/// A month's payout statement (SPEC 7.1): for each affiliate and currency, the balance carried in, what the
/// month's export rows earned, and what is paid or carried on. All sums checked.
public struct PayoutStatement: Sendable, Equatable {
    /// One line of the statement.
    public struct Line: Sendable, Equatable {
        public var pair: PayoutPair
        public var openingMinor: Int64
        public var earnedMinor: Int64
        public var balanceMinor: Int64
        public var payableMinor: Int64
        public var carriedMinor: Int64
        public var rows: Int
    }

    /// One currency's sums over the lines.
    public struct Total: Sendable, Equatable {
        public var currency: String
        public var earnedMinor: Int64
        public var payableMinor: Int64
        public var carriedMinor: Int64
    }

    public let month: PayoutMonth
    /// The payout minimum applied (the rules file's `payoutMinimumMinor` when the month was first published).
    public let minimumMinor: Int64
    /// One per pair with a row in the month or a non-zero opening balance, sorted by pair (bytes).
    public let lines: [Line]
    /// Per currency, sorted by its bytes.
    public let totals: [Total]

    /// The statement of `month` from its earnings and the balances the previous month carried (`opening`; empty
    /// for the first month). A balance above 0 and at least `minimumMinor` is paid; any other carries on.
    public init(
        month: PayoutMonth, earnings: PayoutEarnings, opening: [PayoutPair: Int64], minimumMinor: Int64
    ) throws(PayoutError) {
        self.month = month
        self.minimumMinor = minimumMinor
        var pairs = Set(earnings.pairs.keys)
        for (pair, balance) in opening where balance != 0 { pairs.insert(pair) }
        var lines: [Line] = []
        lines.reserveCapacity(pairs.count)
        for pair in pairs.sorted() {
            let earned = earnings.pairs[pair] ?? PayoutEarnings.Earned(amountMinor: 0, rows: 0)
            let openingMinor = opening[pair] ?? 0
            let balance = try openingMinor.adding(
                earned.amountMinor, "the balance of \(pair.affiliateToken) in \(pair.currency)")
            let paid = balance > 0 && balance >= minimumMinor
            lines.append(
                Line(
                    pair: pair, openingMinor: openingMinor, earnedMinor: earned.amountMinor, balanceMinor: balance,
                    payableMinor: paid ? balance : 0, carriedMinor: paid ? 0 : balance, rows: earned.rows))
        }
        self.lines = lines
        totals = try Self.totals(of: lines)
    }

    /// The balance each pair carries into the next month (pairs carrying 0 left out).
    public var carried: [PayoutPair: Int64] {
        var balances: [PayoutPair: Int64] = [:]
        for line in lines where line.carriedMinor != 0 { balances[line.pair] = line.carriedMinor }
        return balances
    }

    private static func totals(of lines: [Line]) throws(PayoutError) -> [Total] {
        var byCurrency: [ExactString: Total] = [:]
        for line in lines {
            let key = ExactString(line.pair.currency)
            var total =
                byCurrency[key] ?? Total(currency: line.pair.currency, earnedMinor: 0, payableMinor: 0, carriedMinor: 0)
            let what = "the month's total in \(line.pair.currency)"
            total.earnedMinor = try total.earnedMinor.adding(line.earnedMinor, "earned " + what)
            total.payableMinor = try total.payableMinor.adding(line.payableMinor, "payable " + what)
            total.carriedMinor = try total.carriedMinor.adding(line.carriedMinor, "carried " + what)
            byCurrency[key] = total
        }
        return byCurrency.values.sorted { RecordOrder.idPrecedes($0.currency, $1.currency) }
    }
}
