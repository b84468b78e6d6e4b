/// Amounts in a currency's minor unit, written for people in its major unit (ISO 4217 exponents).
public enum Money {
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
