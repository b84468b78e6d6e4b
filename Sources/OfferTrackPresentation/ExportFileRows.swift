import OfferTrackDomain

/// Reading the export's files back (SPEC section 7): every row's pair and amount, for the payout statement.
extension PayoutEarnings {
    /// Adds every row of one export file (SPEC 7's CSV, read by its header's column names). `name` names the file
    /// in errors.
    public mutating func add(exportCSV bytes: [UInt8], name: String) throws(PayoutError) {
        var columns: (token: Int, amount: Int, currency: Int)?
        // Rows of a day come mostly in runs of few affiliates: the last pair's bytes spare building its key again.
        var last: (token: ArraySlice<UInt8>, currency: ArraySlice<UInt8>, pair: PayoutPair)?
        do {
            try CSVReader.forEachRecord(in: bytes) { record in
                guard let found = columns else {
                    columns = try Self.columns(of: record, name: name)
                    return
                }
                guard record.count == ExportPlan.header.count else {
                    throw PayoutError.unreadable(
                        file: name,
                        reason: "line \(record.line) has \(record.count) fields, not \(ExportPlan.header.count)")
                }
                guard let amount = record.int64(found.amount) else {
                    throw PayoutError.unreadable(
                        file: name, reason: "line \(record.line): amount_minor is not an integer")
                }
                let token = record.bytes(found.token)
                let currency = record.bytes(found.currency)
                let pair: PayoutPair
                if let last, last.token.elementsEqual(token), last.currency.elementsEqual(currency) {
                    pair = last.pair
                } else {
                    pair = PayoutPair(
                        affiliateToken: String(decoding: token, as: UTF8.self),
                        currency: String(decoding: currency, as: UTF8.self))
                    last = (token, currency, pair)
                }
                try add(pair, amountMinor: amount)
            }
        } catch let error as PayoutError {
            throw error
        } catch {
            throw .unreadable(file: name, reason: "\(error)")
        }
        guard columns != nil else { throw .unreadable(file: name, reason: "it has no header line") }
    }

    private static func columns(of header: CSVRecord, name: String) throws(PayoutError) -> (Int, Int, Int) {
        let names = (0..<header.count).map { header.text($0) }
        guard names == ExportPlan.header,
            let token = names.firstIndex(of: "affiliate_token"), let amount = names.firstIndex(of: "amount_minor"),
            let currency = names.firstIndex(of: "currency")
        else {
            throw .unreadable(file: name, reason: "its header is not the commission export's")
        }
        return (token, amount, currency)
    }
}
