import Testing

@testable import OfferTrackDomain

/// SPEC section 3's `ts` rule, one row per form and boundary (expected values computed by hand).
@Suite struct TimestampTests {
    static let parseCases: [(String, Int64?)] = [
        ("1970-01-01T00:00:00Z", 0),
        ("1970-01-01t00:00:00z", 0),
        ("1970-01-01T00:00:00.5Z", 500),
        ("1970-01-01T00:00:00.05Z", 50),
        ("1970-01-01T00:00:00.123Z", 123),
        ("1970-01-01T00:00:00.9999Z", 999),
        ("1970-01-01T00:00:00.123456789Z", 123),
        // Truncation also for negative epoch values: .9999 is 999 ms, then the offset from the second.
        ("1969-12-31T23:59:59.9999Z", -1),
        ("1969-12-31T23:59:59.0001Z", -1000),
        ("1970-01-01T01:00:00+01:00", 0),
        ("1969-12-31T23:00:00-01:00", 0),
        ("1970-01-01T00:00:00-00:00", 0),
        ("1970-01-01T23:59:00+23:59", 0),
        ("2026-11-28T10:15:00Z", 1_795_860_900_000),
        ("2026-11-28T10:14:58.120Z", 1_795_860_898_120),
        ("2026-11-28T11:15:00.250+01:00", 1_795_860_900_250),
        ("2024-02-29T00:00:00Z", 1_709_164_800_000),
        ("2000-02-29T12:00:00Z", 951_825_600_000),
        ("0001-01-01T00:00:00Z", -62_135_596_800_000),
        ("9999-12-31T23:59:59.999Z", 253_402_300_799_999),
        // Rejected forms.
        ("1970-01-01 00:00:00Z", nil),
        ("2016-12-31T23:59:60Z", nil),
        ("0000-01-01T00:00:00Z", nil),
        ("10000-01-01T00:00:00Z", nil),
        ("2026-02-29T00:00:00Z", nil),
        ("1900-02-29T00:00:00Z", nil),
        ("2026-04-31T00:00:00Z", nil),
        ("2026-13-01T00:00:00Z", nil),
        ("2026-00-01T00:00:00Z", nil),
        ("2026-01-00T00:00:00Z", nil),
        ("2026-01-01T24:00:00Z", nil),
        ("2026-01-01T23:60:00Z", nil),
        ("2026-01-01T00:00:00+24:00", nil),
        ("2026-01-01T00:00:00+23:60", nil),
        ("2026-01-01T00:00:00+0100", nil),
        ("2026-01-01T00:00:00+01", nil),
        ("2026-01-01T00:00:00", nil),
        ("2026-01-01T00:00Z", nil),
        ("2026-01-01T00:00:00.Z", nil),
        ("2026-01-01T00:00:00,5Z", nil),
        ("2026-01-01T00:00:00Z ", nil),
        (" 2026-01-01T00:00:00Z", nil),
        ("2026-1-01T00:00:00Z", nil),
        ("+2026-01-01T00:00:00Z", nil),
        ("2026-01-01", nil),
        ("", nil),
        ("2026-01-01T00:00:00ZZ", nil),
        ("2026-01-01T00:00:00UTC", nil),
        ("２０２６-01-01T00:00:00Z", nil),
    ]

    @Test(arguments: parseCases)
    func parse(_ text: String, _ expected: Int64?) {
        #expect(Timestamp.parse(text) == expected)
    }

    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (1_795_860_900_000, "2026-11-28T10:15:00.000Z"),
        (1_795_860_898_120, "2026-11-28T10:14:58.120Z"),
        (1_709_164_800_000, "2024-02-29T00:00:00.000Z"),
        (-62_135_596_800_000, "0001-01-01T00:00:00.000Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
    ])
    func format(_ ms: Int64, _ expected: String) {
        #expect(Timestamp.format(ms) == expected)
        #expect(Timestamp.parse(expected) == ms)
    }

    @Test func formatDoesNotTrapAtTheExtremes() {
        _ = Timestamp.format(.min)
        _ = Timestamp.format(.max)
        _ = Timestamp.formatDay(.min)
        #expect(Timestamp.format(-62_135_596_800_001) == "0000-12-31T23:59:59.999Z")
    }

    @Test func roundTripsAcrossTheWholeRange() {
        var ms: Int64 = -62_135_596_800_000
        while ms <= 253_402_300_799_999 {
            let text = Timestamp.format(ms)
            #expect(Timestamp.parse(text) == ms, "\(text)")
            let midnight = ms - ((ms % 86_400_000) + 86_400_000) % 86_400_000
            #expect(Timestamp.parseDay(Timestamp.formatDay(ms)) == midnight, "\(text)")
            ms += 987_654_321_987
        }
    }

    @Test(arguments: [
        ("1970-01-01", Int64(0)),
        ("1969-12-31", -86_400_000),
        ("2024-02-29", 1_709_164_800_000),
        ("0001-01-01", -62_135_596_800_000),
    ])
    func parseDay(_ text: String, _ expected: Int64) {
        #expect(Timestamp.parseDay(text) == expected)
        #expect(Timestamp.formatDay(expected) == text)
    }

    @Test(arguments: ["2026-02-29", "0000-01-01", "2026-11-28T00:00:00Z", "2026-11-2", "2026/11/28", ""])
    func parseDayRejects(_ text: String) {
        #expect(Timestamp.parseDay(text) == nil)
    }

    @Test(arguments: [
        (Int64(-1), "1969-12-31"),
        (-86_400_000, "1969-12-31"),
        (-86_400_001, "1969-12-30"),
        (86_399_999, "1970-01-01"),
        (1_795_860_900_000, "2026-11-28"),
    ])
    func formatDayUsesFloorDivision(_ ms: Int64, _ expected: String) {
        #expect(Timestamp.formatDay(ms) == expected)
    }
}
