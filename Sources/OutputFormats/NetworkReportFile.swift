import OfferTrackDomain

/// The affiliate network's conversion report (SPEC section 13) as `offertrack reconcile` reads it: CSV with a
/// header line, columns found by name (ASCII case ignored, others ignored, order free), every row validated before
/// the rows of other months are left out.
///
/// A UTF-8 byte order mark before the header is skipped (spreadsheet programs write one); quoting, `\n` and `\r\n`
/// are section 7's (`CSVReader`).
public enum NetworkReportFile {
    /// Why the file cannot be read: the physical line where the bad row starts (the header is line 1).
    public struct Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        public let line: Int
        public let reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    /// The columns a network file may have, by their header name.
    public enum Column: String, Sendable, CaseIterable {
        case conversionDate = "conversion_date"
        case status
        case campaignToken = "campaign_token"
        case affiliateToken = "affiliate_token"
        case count

        static let required: [Column] = [.conversionDate, .status, .campaignToken]
    }

    /// The counts of `bytes`' rows whose conversion date falls in `month`, per group and status, in a
    /// `Reconciliation` grouped per affiliate when the file has an `affiliate_token` column. `headerNames` names the
    /// header of a column whose name in the file is another (`--columns`), ASCII case ignored.
    public static func read(_ bytes: [UInt8], month: PayoutMonth, headerNames: [Column: String] = [:])
        throws(Malformed) -> Reconciliation
    {
        let body = bytes.starts(with: byteOrderMark) ? Array(bytes.dropFirst(byteOrderMark.count)) : bytes
        var columns: [Column: Int] = [:]
        var headerCount = 0
        var reconciliation: Reconciliation?
        let span = month.span
        do {
            try CSVReader.forEachRecord(in: body) { record in
                guard var counted = reconciliation else {
                    (columns, headerCount) = try header(record, names: headerNames)
                    reconciliation = Reconciliation(perAffiliate: columns[.affiliateToken] != nil)
                    return
                }
                guard record.count == headerCount else {
                    throw Malformed(
                        line: record.line, reason: "\(record.count) fields where the header has \(headerCount)")
                }
                let row = try Row(record, columns: columns)
                guard span.contains(row.day) else { return }
                do {
                    try counted.addTheirs(row.group, status: row.status, count: row.count)
                } catch {
                    throw Malformed(line: record.line, reason: "\(error)")
                }
                reconciliation = counted
            }
        } catch let malformed as Malformed {
            throw malformed
        } catch let csv as CSVReader.Malformed {
            throw Malformed(line: csv.line, reason: csv.reason)
        } catch {
            throw Malformed(line: 1, reason: "\(error)")
        }
        guard let reconciliation else { throw Malformed(line: 1, reason: "the file has no header line") }
        return reconciliation
    }

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The known columns' positions, and how many fields every row must have.
    private static func header(_ record: CSVRecord, names: [Column: String]) throws(Malformed) -> ([Column: Int], Int) {
        var byName: [String: Column] = [:]
        for column in Column.allCases { byName[(names[column] ?? column.rawValue).asciiLowercased] = column }
        var columns: [Column: Int] = [:]
        for index in 0..<record.count {
            guard let column = byName[record.text(index).asciiLowercased] else { continue }
            guard columns[column] == nil else {
                throw Malformed(line: record.line, reason: "the column \(column.rawValue) is named twice")
            }
            columns[column] = index
        }
        let missing = Column.required.filter { columns[$0] == nil }.map(\.rawValue)
        guard missing.isEmpty else {
            let named = missing.map { name in
                Column(rawValue: name).flatMap { names[$0] }.map { "\(name) (named \($0))" } ?? name
            }
            throw Malformed(line: record.line, reason: "the header has no \(named.joined(separator: ", ")) column")
        }
        return (columns, record.count)
    }

    /// One validated row.
    private struct Row {
        /// 00:00Z of the conversion's UTC date.
        var day: Int64
        var status: NetworkStatus
        var group: ReconciliationGroup
        var count: Int64

        init(_ record: CSVRecord, columns: [Column: Int]) throws(Malformed) {
            func text(_ column: Column) throws(Malformed) -> String? {
                guard let index = columns[column] else { return nil }
                let bytes = record.withBytes(index) { Array($0) }
                guard let text = String(validating: bytes, as: UTF8.self) else {
                    throw Malformed(line: record.line, reason: "\(column.rawValue) is not UTF-8")
                }
                return text
            }
            let date = try text(.conversionDate) ?? ""
            guard let day = Self.day(of: date) else {
                throw Malformed(
                    line: record.line, reason: "conversion_date \"\(date)\" is neither YYYY-MM-DD nor RFC 3339")
            }
            let statusText = try text(.status) ?? ""
            guard let status = NetworkStatus(ignoringCase: statusText) else {
                throw Malformed(
                    line: record.line, reason: "status \"\(statusText)\" is not pending, approved or rejected")
            }
            let affiliate = try text(.affiliateToken)
            if affiliate?.isEmpty == true {
                throw Malformed(line: record.line, reason: "affiliate_token is empty")
            }
            var count: Int64 = 1
            if let countText = try text(.count) {
                guard let value = Self.count(countText) else {
                    throw Malformed(line: record.line, reason: "count \"\(countText)\" is not 1 to 18 digits")
                }
                count = value
            }
            self.day = day
            self.status = status
            self.group = ReconciliationGroup(affiliateToken: affiliate, campaignToken: try text(.campaignToken) ?? "")
            self.count = count
        }

        /// 00:00Z of the UTC date of a `YYYY-MM-DD` date or an RFC 3339 time.
        static func day(of text: String) -> Int64? {
            if let day = Timestamp.parseDay(text) { return day }
            return Timestamp.parse(text).map(Timestamp.startOfDay)
        }

        /// 1 to 18 ASCII digits.
        static func count(_ text: String) -> Int64? {
            let digits = text.utf8
            guard (1...18).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }) else {
                return nil
            }
            return Int64(text)
        }
    }
}
