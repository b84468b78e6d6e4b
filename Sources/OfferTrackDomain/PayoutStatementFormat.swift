/// The payout statement's files (SPEC 7.1): the CSV with section 7's quoting, and the manifest.
extension PayoutStatement {
    /// The CSV's bytes: the header, then one line per pair, every line ending in `\n`.
    public func csv() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96 + lines.count * 64)
        CSVField.append(line: Self.columns, to: &bytes)
        for line in lines {
            CSVField.append(field: line.pair.affiliateToken, to: &bytes)
            bytes.append(UInt8(ascii: ","))
            CSVField.append(field: line.pair.currency, to: &bytes)
            for number in [
                line.openingMinor, line.earnedMinor, line.balanceMinor, line.payableMinor, line.carriedMinor,
            ] {
                bytes.append(UInt8(ascii: ","))
                bytes.append(contentsOf: String(number).utf8)
            }
            bytes.append(UInt8(ascii: ","))
            bytes.append(contentsOf: String(line.rows).utf8)
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    /// The manifest's bytes for this statement's `csv`, first published at `generatedAt` (epoch milliseconds):
    /// `{"month","lines","minimumMinor","totals","sha256","generatedAt"}` on one line.
    public func manifest(csv: [UInt8], generatedAt: Int64) -> [UInt8] {
        let totals = self.totals.map { total in
            JSONStringLiteral.quote(total.currency)
                + ":{\"earnedMinor\":\(total.earnedMinor),\"payableMinor\":\(total.payableMinor),"
                + "\"carriedMinor\":\(total.carriedMinor)}"
        }
        let text =
            "{\"month\":\(JSONStringLiteral.quote(month.description)),\"lines\":\(lines.count),"
            + "\"minimumMinor\":\(minimumMinor),\"totals\":{\(totals.joined(separator: ","))},"
            + "\"sha256\":\"\(SHA256.hex(of: csv))\",\"generatedAt\":\(JSONStringLiteral.quote(Timestamp.format(generatedAt)))}\n"
        return Array(text.utf8)
    }
}
