import JSON
import OfferTrackDomain

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
            (
                key: total.currency,
                value: JSONValue.object([
                    "earnedMinor": .integer(total.earnedMinor), "payableMinor": .integer(total.payableMinor),
                    "carriedMinor": .integer(total.carriedMinor),
                ])
            )
        }
        let manifest = JSONValue.object([
            "month": .string(month.description), "lines": .integer(lines.count),
            "minimumMinor": .integer(minimumMinor), "totals": .object(totals), "sha256": .string(SHA256.hex(of: csv)),
            "generatedAt": .string(Timestamp.format(generatedAt)),
        ])
        return JSONWriter.bytes(manifest) + [UInt8(ascii: "\n")]
    }
}

extension PayoutStatement {
    /// The statement CSV's columns (SPEC 7.1), in order.
    public static let columns = [
        "affiliate_token", "currency", "opening_minor", "earned_minor", "balance_minor", "payable_minor",
        "carried_minor", "rows",
    ]

    /// The balances a published statement's CSV carries into the next month (pairs carrying 0 left out): the
    /// previous month's `carried_minor`, read back from the file as published. `name` names the file in errors.
    public static func carried(fromCSV bytes: [UInt8], name: String) throws(PayoutError) -> [PayoutPair: Int64] {
        var balances: [PayoutPair: Int64] = [:]
        var sawHeader = false
        do {
            try CSVReader.forEachRecord(in: bytes) { record in
                guard sawHeader else {
                    guard (0..<record.count).map({ record.text($0) }) == columns else {
                        throw PayoutError.unreadable(file: name, reason: "its header is not a payout statement's")
                    }
                    sawHeader = true
                    return
                }
                guard record.count == columns.count, let carried = record.int64(6) else {
                    throw PayoutError.unreadable(file: name, reason: "line \(record.line) is not a statement line")
                }
                if carried != 0 {
                    balances[PayoutPair(affiliateToken: record.text(0), currency: record.text(1))] = carried
                }
            }
        } catch let error as PayoutError {
            throw error
        } catch {
            throw .unreadable(file: name, reason: "\(error)")
        }
        guard sawHeader else { throw .unreadable(file: name, reason: "it has no header line") }
        return balances
    }
}
