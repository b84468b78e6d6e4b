import OutputFormats
import Testing

@testable import OfferTrackDomain

/// SPEC 7.1's payout statement, computed by hand: opening, earned, balance, payable and carried per pair.
@Suite struct PayoutStatementTests {
    static var november: PayoutMonth {
        get throws { try #require(PayoutMonth("2026-11")) }
    }

    static func pair(_ token: String, _ currency: String = "USD") -> PayoutPair {
        PayoutPair(affiliateToken: token, currency: currency)
    }

    /// Earnings from (token, currency, amount) rows.
    static func earnings(_ rows: [(String, String, Int64)]) throws -> PayoutEarnings {
        var earnings = PayoutEarnings()
        for (token, currency, amount) in rows { try earnings.add(pair(token, currency), amountMinor: amount) }
        return earnings
    }

    /// The statement's data lines as CSV text.
    static func lines(_ statement: PayoutStatement) -> [String] {
        String(decoding: statement.csv(), as: UTF8.self).split(separator: "\n").dropFirst().map(String.init)
    }

    @Test(arguments: [
        // (opening, rows, minimum) -> the line: opening,earned,balance,payable,carried,rows
        (Int64(0), [Int64(500), 700], Int64(1000), "0,1200,1200,1200,0,2"),  // above the minimum: paid
        (0, [500, 500], 1000, "0,1000,1000,1000,0,2"),  // exactly at the minimum: paid
        (0, [500, 499], 1000, "0,999,999,0,999,2"),  // below: carried
        (400, [300, 300], 1000, "400,600,1000,1000,0,2"),  // the opening brings it to the minimum
        (0, [500, -500], 0, "0,0,0,0,0,2"),  // zero: nothing paid, nothing carried, the line stays
        (0, [-500], 0, "0,-500,-500,0,-500,1"),  // a clawback: the negative balance carries
        (-500, [300], 0, "-500,300,-200,0,-200,1"),  // still negative after earning
        (-500, [700], 0, "-500,700,200,200,0,1"),  // earned back: paid with no minimum
        (0, [1], 0, "0,1,1,1,0,1"),  // minimum 0 pays any positive balance
    ])
    func oneLine(opening: Int64, rows: [Int64], minimum: Int64, expected: String) throws {
        let statement = try PayoutStatement(
            month: try Self.november, earnings: try Self.earnings(rows.map { ("aff1", "USD", $0) }),
            opening: opening == 0 ? [:] : [Self.pair("aff1"): opening], minimumMinor: minimum)
        #expect(Self.lines(statement) == ["aff1,USD," + expected])
    }

    @Test func aPairWithOnlyANonZeroOpeningGetsALineAndOneWithNothingDoesNot() throws {
        let statement = try PayoutStatement(
            month: try Self.november, earnings: try Self.earnings([("b", "USD", 100)]),
            opening: [Self.pair("a"): 300, Self.pair("c"): -50, Self.pair("d"): 0], minimumMinor: 1000)
        #expect(
            Self.lines(statement) == ["a,USD,300,0,300,0,300,0", "b,USD,0,100,100,0,100,1", "c,USD,-50,0,-50,0,-50,0"])
        #expect(statement.carried == [Self.pair("a"): 300, Self.pair("b"): 100, Self.pair("c"): -50])
    }

    @Test func severalCurrenciesAreSeparatePairsAndTotalsPerCurrency() throws {
        let statement = try PayoutStatement(
            month: try Self.november,
            earnings: try Self.earnings([
                ("aff1", "USD", 1500), ("aff1", "EUR", 200), ("aff2", "EUR", 900), ("aff2", "EUR", 300),
            ]),
            opening: [Self.pair("aff1", "EUR"): 850], minimumMinor: 1000)
        #expect(
            Self.lines(statement) == [
                "aff1,EUR,850,200,1050,1050,0,1", "aff1,USD,0,1500,1500,1500,0,1", "aff2,EUR,0,1200,1200,1200,0,2",
            ])
        #expect(
            statement.totals == [
                .init(currency: "EUR", earnedMinor: 1400, payableMinor: 2250, carriedMinor: 0),
                .init(currency: "USD", earnedMinor: 1500, payableMinor: 1500, carriedMinor: 0),
            ])
    }

    @Test func linesAreSortedByTokenBytesThenCurrencyBytesAndEquivalentSpellingsStayApart() throws {
        // "é" precomposed (C3 A9) and decomposed (65 CC 81) are equal as Swift strings, not as bytes.
        let statement = try PayoutStatement(
            month: try Self.november,
            earnings: try Self.earnings([
                ("a", "USD", 1), ("\u{E9}", "USD", 1), ("e\u{301}", "USD", 1), ("Z", "USD", 1), ("_", "USD", 1),
                ("a", "EUR", 1), ("z", "USD", 1),
            ]),
            opening: [:], minimumMinor: 0)
        #expect(
            statement.lines.map { Array($0.pair.affiliateToken.utf8) + [0] + Array($0.pair.currency.utf8) } == [
                Array("Z\0USD".utf8), Array("_\0USD".utf8), Array("a\0EUR".utf8), Array("a\0USD".utf8),
                Array("e\u{301}\0USD".utf8), Array("z\0USD".utf8), Array("\u{E9}\0USD".utf8),
            ])
    }

    @Test func theFilesMatchTheSpecByteForByte() throws {
        let statement = try PayoutStatement(
            month: try Self.november, earnings: try Self.earnings([("a,b", "USD", 1200), ("c", "JPY", 5)]),
            opening: [:], minimumMinor: 1000)
        let csv = statement.csv()
        #expect(
            String(decoding: csv, as: UTF8.self)
                == "affiliate_token,currency,opening_minor,earned_minor,balance_minor,payable_minor,carried_minor,rows\n"
                + "\"a,b\",USD,0,1200,1200,1200,0,1\nc,JPY,0,5,5,0,5,1\n")
        #expect(
            String(decoding: statement.manifest(csv: csv, generatedAt: 1_764_547_200_123), as: UTF8.self)
                == "{\"month\":\"2026-11\",\"lines\":2,\"minimumMinor\":1000,\"totals\":{"
                + "\"JPY\":{\"earnedMinor\":5,\"payableMinor\":0,\"carriedMinor\":5},"
                + "\"USD\":{\"earnedMinor\":1200,\"payableMinor\":1200,\"carriedMinor\":0}},"
                + "\"sha256\":\"\(SHA256.hex(of: csv))\",\"generatedAt\":\"2025-12-01T00:00:00.123Z\"}\n")
        let empty = try PayoutStatement(
            month: try Self.november, earnings: PayoutEarnings(), opening: [:], minimumMinor: 0)
        #expect(String(decoding: empty.csv(), as: UTF8.self).split(separator: "\n").count == 1)
        #expect(
            String(decoding: empty.manifest(csv: empty.csv(), generatedAt: 0), as: UTF8.self).contains(
                #""lines":0,"minimumMinor":0,"totals":{},"#))
    }

    @Test func theCarriedBalancesReadBackFromTheCSVAreTheStatementsOwn() throws {
        let statement = try PayoutStatement(
            month: try Self.november,
            earnings: try Self.earnings([("a,\"q\"", "USD", 300), ("b", "USD", -20), ("c", "USD", 5000)]),
            opening: [Self.pair("d", "EUR"): 7], minimumMinor: 1000)
        #expect(try PayoutStatement.carried(fromCSV: statement.csv(), name: "x") == statement.carried)
        #expect(statement.carried.count == 3)
    }

    @Test func overflowingSumsAreErrorsNotTraps() throws {
        var earnings = PayoutEarnings()
        try earnings.add(Self.pair("a"), amountMinor: .max)
        #expect(throws: PayoutError.self) { try earnings.add(Self.pair("a"), amountMinor: 1) }
        #expect(throws: PayoutError.self) {
            try PayoutStatement(
                month: try Self.november, earnings: earnings, opening: [Self.pair("a"): 1], minimumMinor: 0)
        }
        var two = PayoutEarnings()
        try two.add(Self.pair("a"), amountMinor: .max)
        try two.add(Self.pair("b"), amountMinor: .max)
        // Each line fits; the currency's total does not.
        #expect(throws: PayoutError.self) {
            try PayoutStatement(month: try Self.november, earnings: two, opening: [:], minimumMinor: 0)
        }
        var min = PayoutEarnings()
        try min.add(Self.pair("a"), amountMinor: .min)
        #expect(throws: PayoutError.self) {
            try PayoutStatement(month: try Self.november, earnings: min, opening: [Self.pair("a"): -1], minimumMinor: 0)
        }
    }

    @Test func earningsReadEveryRowOfAnExportFileHonouringItsQuoting() throws {
        let day: Int64 = 1_764_547_200_000
        func row(_ id: String, _ token: String, _ campaign: String?, _ amount: Int64) -> CommissionRow {
            CommissionRow(
                conversionId: id, convertedAt: day, offerId: "p", presentedAt: day - 1, affiliateToken: token,
                campaignToken: campaign, messageIdentifier: "join", itemID: nil, amountMinor: amount, currency: "USD")
        }
        var csv: [UInt8] = []
        CSVField.append(line: ExportPlan.header, to: &csv)
        row("1", "aff1", "a,\"b\"\nc", 500).appendCSV(kind: "commission", originalDate: "", negated: false, to: &csv)
        row("2", "aff1", nil, 700).appendCSV(kind: "adjustment", originalDate: "2025-11-30", negated: true, to: &csv)
        row("2", "aff1", nil, 100).appendCSV(kind: "adjustment", originalDate: "2025-11-30", negated: false, to: &csv)
        row("3", "aff,2", "\r\n", 0).appendCSV(kind: "commission", originalDate: "", negated: false, to: &csv)
        var earnings = PayoutEarnings()
        try earnings.add(exportCSV: csv, name: "commissions-2025-12-01.csv")
        #expect(
            earnings.pairs == [
                Self.pair("aff1"): .init(amountMinor: -100, rows: 3),
                Self.pair("aff,2"): .init(amountMinor: 0, rows: 1),
            ])
        // A header alone is a day with no rows; anything else is refused, naming the file.
        var none = PayoutEarnings()
        try none.add(exportCSV: Array((ExportPlan.header.joined(separator: ",") + "\n").utf8), name: "x")
        #expect(none.pairs.isEmpty)
        for bad in [
            "", "kind,amount\n", "\(ExportPlan.header.joined(separator: ","))\ncommission,1\n",
            "\(ExportPlan.header.joined(separator: ","))\ncommission,1,t,o,t,a,,join,,12x,USD,\n",
            "\(ExportPlan.header.joined(separator: ","))\ncommission,\"1,t,o,t,a,,join,,1,USD,\n",
        ] {
            #expect(throws: PayoutError.self, "\(bad)") { try PayoutEarnings().adding(exportCSV: Array(bad.utf8)) }
        }
    }

    @Test func theCSVReaderSplitsQuotedFieldsAndRefusesBrokenOnes() throws {
        var records: [[String]] = []
        try CSVReader.forEachRecord(in: Array("a,\"b,c\",\"d\"\"e\"\n\"x\ny\",,\r\nlast".utf8)) { record in
            records.append((0..<record.count).map { record.text($0) })
        }
        #expect(records == [["a", "b,c", "d\"e"], ["x\ny", "", ""], ["last"]])
        for broken in ["a,\"b\n", "a,b\"c\n", "\"a\"b\n"] {
            #expect(throws: CSVReader.Malformed.self, "\(broken)") {
                try CSVReader.forEachRecord(in: Array(broken.utf8)) { _ in }
            }
        }
    }

    @Test func monthsKnowTheirDaysNeighboursAndLeapYears() {
        #expect(PayoutMonth("2028-02")?.lastDay == "2028-02-29")
        #expect(PayoutMonth("2026-02")?.lastDay == "2026-02-28")
        #expect(PayoutMonth("2026-12")?.next?.description == "2027-01")
        #expect(PayoutMonth("2027-01")?.previous?.description == "2026-12")
        #expect(PayoutMonth("2026-11")?.contains(day: "2026-11-30") == true)
        #expect(PayoutMonth("2026-11")?.contains(day: "2026-12-01") == false)
        for bad in ["2026-13", "2026-1", "26-11", "2026-11-01", "2026/11", "0000-01", ""] {
            #expect(PayoutMonth(bad) == nil, "\(bad)")
        }
    }
}

extension PayoutEarnings {
    /// A copy with `exportCSV` added (for `#expect(throws:)`).
    fileprivate func adding(exportCSV bytes: [UInt8]) throws -> PayoutEarnings {
        var copy = self
        try copy.add(exportCSV: bytes, name: "test.csv")
        return copy
    }
}
