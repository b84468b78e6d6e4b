/// A sum of money that does not fit in 64 bits: reported, never wrapped or trapped on.
public struct MoneyOverflow: Error, Equatable, CustomStringConvertible {
    public init() {}
    public var description: String { "a sum of money exceeds the largest amount this program can add up (2^63 - 1)" }
}

/// Amounts in a currency's minor unit, written for people in its major unit (ISO 4217 exponents).
public enum Money {
    /// `lhs + rhs`, or `MoneyOverflow` when the sum does not fit.
    public static func sum(_ lhs: Int64, _ rhs: Int64) throws(MoneyOverflow) -> Int64 {
        let (total, overflow) = lhs.addingReportingOverflow(rhs)
        guard !overflow else { throw MoneyOverflow() }
        return total
    }

    /// `amount × count`, or `MoneyOverflow` when the product does not fit.
    public static func product(_ amount: Int64, _ count: Int) throws(MoneyOverflow) -> Int64 {
        let (total, overflow) = amount.multipliedReportingOverflow(by: Int64(count))
        guard !overflow else { throw MoneyOverflow() }
        return total
    }

    /// The sum of `amounts`, or `MoneyOverflow`.
    public static func total(_ amounts: some Sequence<Int64>) throws(MoneyOverflow) -> Int64 {
        var total: Int64 = 0
        for amount in amounts { total = try sum(total, amount) }
        return total
    }

    /// ISO 4217 currencies whose minor unit is not a hundredth (exponent 2, every other code).
    private static let exponents: [String: Int] = [
        // No minor unit.
        "BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0, "RWF": 0,
        "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
        // Thousandths.
        "BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
        // Ten-thousandths.
        "CLF": 4, "UYW": 4,
    ]

    /// How many decimal digits the currency's minor unit has (2 unless ISO 4217 says otherwise).
    public static func exponent(of currency: String) -> Int {
        exponents[currency] ?? 2
    }

    /// `amountMinor` in the major unit with the currency's decimals: `8400` USD is `84.00`, JPY `840` is `840`,
    /// `-5` USD is `-0.05`. Integer arithmetic only.
    public static func format(_ amountMinor: Int64, currency: String) -> String {
        let digits = exponent(of: currency)
        let sign = amountMinor < 0 ? "-" : ""
        let magnitude = amountMinor.magnitude
        guard digits > 0 else { return sign + String(magnitude) }
        var scale: UInt64 = 1
        for _ in 0..<digits { scale *= 10 }
        let fraction = String(magnitude % scale)
        return sign + String(magnitude / scale) + "." + String(repeating: "0", count: digits - fraction.count)
            + fraction
    }
}
