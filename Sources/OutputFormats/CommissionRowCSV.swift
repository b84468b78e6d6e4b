import OfferTrackDomain

/// A commission row as one line of the export's CSV.
extension CommissionRow {
    /// Appends this row as one line of the export's CSV (SPEC section 7's columns, in order).
    public func appendCSV(kind: String, originalDate: String, negated: Bool, to bytes: inout [UInt8]) {
        let comma = UInt8(ascii: ",")
        CSVField.append(field: kind, to: &bytes)
        bytes.append(comma)
        CSVField.append(field: conversionId, to: &bytes)
        bytes.append(comma)
        Timestamp.append(convertedAt, to: &bytes)
        bytes.append(comma)
        CSVField.append(field: offerId, to: &bytes)
        bytes.append(comma)
        Timestamp.append(presentedAt, to: &bytes)
        for field in [affiliateToken, campaignToken ?? "", messageIdentifier, itemID ?? ""] {
            bytes.append(comma)
            CSVField.append(field: field, to: &bytes)
        }
        bytes.append(comma)
        bytes.append(contentsOf: String(negated ? 0 - amountMinor : amountMinor).utf8)
        bytes.append(comma)
        CSVField.append(field: currency, to: &bytes)
        bytes.append(comma)
        CSVField.append(field: originalDate, to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
    }
}
