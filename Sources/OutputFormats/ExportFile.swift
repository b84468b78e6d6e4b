import JSON
import OfferTrackDomain

/// The export's files (SPEC section 7): a plan's CSV and manifest bytes.
extension ExportPlan {
    /// The CSV file's bytes: header, then one line per row, every line ending in `\n`.
    public func csv() -> [UInt8] {
        Self.csv(of: lines)
    }

    /// The CSV file's bytes of `lines`, in their order (the one writer of the export's CSV: a journal's day, and
    /// the fleet's merged day).
    public static func csv(of lines: some Collection<Line>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + lines.count * 200)
        CSVField.append(line: header, to: &bytes)
        for line in lines {
            line.row.appendCSV(
                kind: line.kind.rawValue, originalDate: line.originalDate ?? "", negated: line.isReversal, to: &bytes)
        }
        return bytes
    }

    /// The manifest's bytes for this plan's `csv`, first published at `generatedAt`.
    /// `MoneyOverflow` when a sum does not fit.
    public func manifest(
        csv: [UInt8], currency: String, rulesSha256: String, generatedAt: Int64
    ) throws(MoneyOverflow) -> [UInt8] {
        let (commission, adjustment) = try totals()
        return Self.manifest(
            day: day, rows: lines.count, commissionMinor: commission, adjustmentMinor: adjustment, csv: csv,
            currency: currency, rulesSha256: rulesSha256, generatedAt: Timestamp.format(generatedAt))
    }

    /// A manifest's bytes (SPEC section 7), its members in the SPEC's order.
    public static func manifest(
        day: String, rows: Int, commissionMinor: Int64, adjustmentMinor: Int64, csv: [UInt8], currency: String,
        rulesSha256: String, generatedAt: String
    ) -> [UInt8] {
        let manifest = JSONValue.object([
            "date": .string(day), "rows": .integer(rows), "commissionMinor": .integer(commissionMinor),
            "adjustmentMinor": .integer(adjustmentMinor), "currency": .string(currency),
            "sha256": .string(SHA256.hex(of: csv)), "rulesSha256": .string(rulesSha256),
            "generatedAt": .string(generatedAt),
        ])
        return JSONWriter.bytes(manifest) + [UInt8(ascii: "\n")]
    }

    public static let header = [
        "kind", "conversion_id", "converted_at", "offer_id", "presented_at", "affiliate_token", "campaign_token",
        "message_identifier", "item_id", "amount_minor", "currency", "original_date",
    ]
}
