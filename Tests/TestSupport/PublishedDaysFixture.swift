import AttributionJoin
import JournalStore
import OfferTrackDomain
import OutputFormats
import SQLite

/// Published export days synthesised straight into a journal, stored as `offertrack export` stores them (SPEC 7):
/// for the payout statement's property test and the bench, where exporting each day from records would take long.
public enum PublishedDaysFixture {
    /// One export file of `day`, written by the export's own row writer: `rows` rows (at least), each a commission
    /// among `affiliates` and `currencies`, or a reversal and its replacement (negative and changed amounts);
    /// some campaign tokens need quoting. Returns the bytes and each row's pair and amount, for an oracle.
    public static func exportCSV(
        day: String, rows: Int, affiliates: [String], currencies: [String], using generator: inout SeededGenerator
    ) -> (csv: [UInt8], amounts: [(pair: PayoutPair, amountMinor: Int64)]) {
        var csv: [UInt8] = []
        csv.reserveCapacity(64 + rows * 180)
        CSVField.append(line: ExportPlan.header, to: &csv)
        var amounts: [(pair: PayoutPair, amountMinor: Int64)] = []
        amounts.reserveCapacity(rows + 1)
        let start = Timestamp.parseDay(day) ?? 0
        let campaigns = [nil, "spring26", "a,b", "say \"hi\"", "two\nlines"]
        var index = 0
        while index < rows {
            let affiliate = affiliates[Int.random(in: 0..<affiliates.count, using: &generator)]
            let currency = currencies[Int.random(in: 0..<currencies.count, using: &generator)]
            let at = start + Int64(index) * 1000
            let row = CommissionRow(
                conversionId: "c-\(day)-\(index)", convertedAt: at, offerId: "p-\(day)-\(index)",
                presentedAt: at - 60_000, affiliateToken: affiliate,
                campaignToken: campaigns[Int.random(in: 0..<campaigns.count, using: &generator)],
                messageIdentifier: "join", itemID: nil, amountMinor: Int64.random(in: 0...2000, using: &generator),
                currency: currency)
            let pair = PayoutPair(affiliateToken: affiliate, currency: currency)
            if Int.random(in: 0..<5, using: &generator) == 0 {
                // A late change to an earlier day: the row in force reversed, then (mostly) a new amount.
                row.appendCSV(kind: "adjustment", originalDate: "2000-01-01", negated: true, to: &csv)
                amounts.append((pair, 0 - row.amountMinor))
                index += 1
                if Bool.random(using: &generator) {
                    var replacement = row
                    replacement.amountMinor = Int64.random(in: 0...500, using: &generator)
                    replacement.appendCSV(kind: "adjustment", originalDate: "2000-01-01", negated: false, to: &csv)
                    amounts.append((pair, replacement.amountMinor))
                    index += 1
                }
            } else {
                row.appendCSV(kind: "commission", originalDate: "", negated: false, to: &csv)
                amounts.append((pair, row.amountMinor))
                index += 1
            }
        }
        return (csv, amounts)
    }

    /// Creates the journal at `path` if needed (migrated to the current schema) and stores `days` as published
    /// export days, each with its CSV and a manifest naming the day.
    public static func publish(_ days: [(day: String, csv: [UInt8])], in path: String) throws {
        _ = try JournalWriter(
            path: path, options: .init(durability: .normal, schema: .migrate, maintainsDerivedTables: false))
        let connection = try Connection(path: path, mode: .readWrite)
        try connection.transaction {
            let insert = try connection.prepare(
                "INSERT INTO published_days (day, generated_at, csv, manifest) VALUES (?1, ?2, ?3, ?4)")
            for (day, csv) in days {
                try insert.bind(day, at: 1)
                try insert.bind(Timestamp.parseDay(day) ?? 0, at: 2)
                try insert.bindText(csv, at: 3)
                try insert.bindText(Array("{\"date\":\"\(day)\"}\n".utf8), at: 4)
                try insert.run()
            }
        }
    }

    /// Every day from `first` through `last` (`YYYY-MM-DD`), in order.
    public static func days(from first: String, through last: String) -> [String] {
        guard let start = Timestamp.parseDay(first), let end = Timestamp.parseDay(last), start <= end else {
            return []
        }
        var days: [String] = []
        var day = start
        while day <= end {
            days.append(Timestamp.formatDay(day))
            day += Timestamp.millisecondsPerDay
        }
        return days
    }
}
