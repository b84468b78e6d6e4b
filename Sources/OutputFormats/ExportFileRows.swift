import OfferTrackDomain

/// Reading the export's files back (SPEC section 7): every row's pair and amount, for the payout statement.
extension PayoutEarnings {
    /// Adds every row of one export file (SPEC 7's CSV, read by its header's column names). `name` names the file
    /// in errors.
    public mutating func add(exportCSV bytes: [UInt8], name: String) throws(PayoutError) {
        var columns: (token: Int, amount: Int, currency: Int)?
        var tally = PairTally()
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
                try record.withBytes(found.token) { token in
                    try record.withBytes(found.currency) { currency in
                        try tally.add(amount, token: token, currency: currency)
                    }
                }
            }
        } catch let error as PayoutError {
            throw error
        } catch {
            throw .unreadable(file: name, reason: "\(error)")
        }
        guard columns != nil else { throw .unreadable(file: name, reason: "it has no header line") }
        for (index, key) in tally.keys.enumerated() {
            let pair = PayoutPair(
                affiliateToken: String(decoding: key.token, as: UTF8.self),
                currency: String(decoding: key.currency, as: UTF8.self))
            try add(pair, amountMinor: tally.sums[index], rows: tally.rows[index])
        }
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

/// One file's sums per (token, currency) bytes, found by a hash of the bytes without building a string per row.
private struct PairTally {
    private(set) var keys: [(token: [UInt8], currency: [UInt8])] = []
    private(set) var sums: [Int64] = []
    private(set) var rows: [Int] = []
    private var slots: [UInt64: [Int]] = [:]

    mutating func add(
        _ amount: Int64, token: UnsafeBufferPointer<UInt8>, currency: UnsafeBufferPointer<UInt8>
    ) throws(PayoutError) {
        let index = find(token: token, currency: currency)
        do {
            sums[index] = try Money.sum(sums[index], amount)
        } catch {
            throw .overflow(
                "the earnings of \(String(decoding: token, as: UTF8.self)) in "
                    + String(decoding: currency, as: UTF8.self))
        }
        rows[index] += 1
    }

    private mutating func find(token: UnsafeBufferPointer<UInt8>, currency: UnsafeBufferPointer<UInt8>) -> Int {
        // FNV-1a over token, a separator no UTF-8 text holds, and currency.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in token { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        hash = (hash ^ 0xFF) &* 0x100_0000_01b3
        for byte in currency { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        for index in slots[hash] ?? []
        where keys[index].token.elementsEqual(token)
            && keys[index].currency.elementsEqual(currency)
        {
            return index
        }
        keys.append((Array(token), Array(currency)))
        sums.append(0)
        rows.append(0)
        slots[hash, default: []].append(keys.count - 1)
        return keys.count - 1
    }
}
