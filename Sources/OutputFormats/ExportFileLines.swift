import OfferTrackDomain

/// Why an export file's bytes are not SPEC 7's CSV.
public struct ExportCSVUnreadable: Error, CustomStringConvertible {
    public let description: String
}

/// Reading an export file's lines back (SPEC section 7), for days a journal published before it stored their lines
/// as rows (schema 14): the fleet's export of such a day merges these.
extension ExportPlan {
    /// The lines of an export CSV, in its order, such that `csv(of:)` writes exactly `bytes` again (checked: a file
    /// that would be written otherwise is refused). A line is read as written: a reversal keeps its negated amount
    /// and is not marked `isReversal`, which writes the same bytes and has the same signed amount; empty
    /// `campaign_token`, `item_id` and `original_date` are read as absent.
    public static func lines(readingCSV bytes: [UInt8]) throws -> [Line] {
        var lines: [Line] = []
        var sawHeader = false
        try CSVReader.forEachRecord(in: bytes) { record in
            guard sawHeader else {
                guard (0..<record.count).map({ record.text($0) }) == header else {
                    throw ExportCSVUnreadable(description: "its header is not the commission export's")
                }
                sawHeader = true
                return
            }
            lines.append(try line(record))
        }
        guard sawHeader else { throw ExportCSVUnreadable(description: "it has no header line") }
        guard csv(of: lines) == bytes else {
            throw ExportCSVUnreadable(description: "its rows are not written as the commission export writes them")
        }
        return lines
    }

    private static func line(_ record: CSVRecord) throws -> Line {
        func unreadable(_ reason: String) -> ExportCSVUnreadable {
            ExportCSVUnreadable(description: "line \(record.line): \(reason)")
        }
        guard record.count == header.count else {
            throw unreadable("\(record.count) fields, not \(header.count)")
        }
        guard let kind = Line.Kind(rawValue: record.text(0)) else { throw unreadable("kind is not one of SPEC 7's") }
        guard let convertedAt = Timestamp.parse(record.text(2)), let presentedAt = Timestamp.parse(record.text(4))
        else { throw unreadable("a timestamp is not RFC 3339") }
        guard let amount = record.int64(9) else { throw unreadable("amount_minor is not an integer") }
        func optional(_ index: Int) -> String? {
            let text = record.text(index)
            return text.isEmpty ? nil : text
        }
        let row = CommissionRow(
            conversionId: record.text(1), convertedAt: convertedAt, offerId: record.text(3), presentedAt: presentedAt,
            affiliateToken: record.text(5), campaignToken: optional(6), messageIdentifier: record.text(7),
            itemID: optional(8), amountMinor: amount, currency: record.text(10))
        return Line(kind: kind, row: row, isReversal: false, originalDate: optional(11))
    }
}
