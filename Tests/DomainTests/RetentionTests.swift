import OfferTrackDomain
import Testing
import WireFormat

/// SPEC 12's arithmetic and what sealing keeps, computed by hand.
@Suite struct RetentionTests {
    static let day = Timestamp.millisecondsPerDay
    static let hour: Int64 = 3_600_000

    @Test(arguments: [
        // (W hours, F hours, K days, smallest R)
        (720, 24, 31, 33), (24, 24, 2, 4), (1, 1, 1, 3), (23, 1, 1, 3), (23, 2, 2, 4),
    ])
    func windowDaysAndTheSmallestRetention(window: Int64, freshness: Int64, days: Int64, minimum: Int64) {
        #expect(Retention.windowDays(windowMs: window * Self.hour, freshnessMs: freshness * Self.hour) == days)
        #expect(Retention.minimumDays(windowMs: window * Self.hour, freshnessMs: freshness * Self.hour) == minimum)
    }

    @Test func sealableDaysAndTheHorizon() {
        let retention = Retention(retentionDays: 40, windowMs: 720 * Self.hour, freshnessMs: 24 * Self.hour)
        // 2026-09-15T12:00Z is day 20711: days before 20711 - 40 = 20671 (2026-08-06) are sealable.
        let asOf = Timestamp.parse("2026-09-15T12:00:00Z") ?? 0
        #expect(Timestamp.dayNumber(asOf) == 20711)
        #expect(retention.lastSealableDay(asOf: asOf) == 20670)
        // S = 2026-08-05: the horizon is 00:00Z of S + 1 + 31 = 2026-09-06.
        #expect(Timestamp.format(retention.horizon(lastSealedDay: 20670)) == "2026-09-06T00:00:00.000Z")
        // A day before the epoch floors.
        #expect(Timestamp.dayNumber(-1) == -1)
    }

    @Test(arguments: [
        (#""retentionDays":33"#, true), (#""retentionDays":36500"#, true), (#""retentionDays":32"#, false),
        (#""retentionDays":36501"#, false), (#""retentionDays":null"#, false), (#""retentionDays":"40""#, false),
        (#""retentionDays":40.0"#, false), (#""attributionWindowHours":24,"retentionDays":4"#, true),
        (#""attributionWindowHours":24,"retentionDays":3"#, false),
    ])
    func theRulesFilesRetentionDays(member: String, valid: Bool) {
        let file = #"{"currency":"USD","rules":[],"# + member + "}"
        do {
            let rules = try RulesFile(bytes: Array(file.utf8))
            #expect(valid && rules.rules.retentionDays != nil, "\(member)")
        } catch {
            #expect(!valid && error.path == "retentionDays", "\(member): \(error)")
        }
    }

    /// One user, day by day (S = day 9, so records before day 10 are sealed):
    /// 0 c0 capabilities eligible, day 0    — an older check: goes
    /// 1 c1 capabilities eligible, day 1    — p1's eligibility: stays
    /// 2 p1 presented loaded, day 1         — the conversion names it: stays
    /// 3 u1 presented not loaded, day 1     — never read: goes
    /// 4 d1 declined, day 2                 — before the conversion, no lapse: goes
    /// 5 c2 capabilities subscriber, day 2  — latest check before p2: stays
    /// 6 p2 presented loaded, day 2         — the latest loaded presentation: stays
    /// 7 s1 subscribed offerId p1, day 3    — the conversion: stays
    /// 8 s2 subscribed, day 4               — a repeat: stays
    /// 9 l1 capabilities ineligible, day 5  — the first lapse after the conversion: stays
    /// 10 l2 declined, day 6                — a later lapse: goes
    /// 11 c3 capabilities unauthorized, day 7 — the latest check: stays
    /// 12 r1 review, day 8                  — never sealed: stays
    /// 13 c4 capabilities eligible, day 12  — not sealed
    @Test func sealingKeepsWhatTheRulesRead() {
        let user = "u"
        func at(_ day: Int64) -> Int64 { day * Self.day + 3_600_000 }
        let offer = Offer(affiliateToken: "aff", campaignToken: nil, messageIdentifier: nil, itemID: nil)
        let records = [
            Record(id: "c0", ts: at(0), user: user, body: .capabilities(.eligible)),
            Record(id: "c1", ts: at(1), user: user, body: .capabilities(.eligible)),
            Record(id: "p1", ts: at(1) + 1, user: user, body: .presented(offer, loaded: true)),
            Record(id: "u1", ts: at(1) + 2, user: user, body: .presented(offer, loaded: false)),
            Record(id: "d1", ts: at(2), user: user, body: .outcome(subscribed: false, decision: nil, offerId: nil)),
            Record(id: "c2", ts: at(2) + 1, user: user, body: .capabilities(.subscriber)),
            Record(id: "p2", ts: at(2) + 2, user: user, body: .presented(offer, loaded: true)),
            Record(id: "s1", ts: at(3), user: user, body: .outcome(subscribed: true, decision: nil, offerId: "p1")),
            Record(id: "s2", ts: at(4), user: user, body: .outcome(subscribed: true, decision: nil, offerId: nil)),
            Record(id: "l1", ts: at(5), user: user, body: .capabilities(.ineligible)),
            Record(id: "l2", ts: at(6), user: user, body: .outcome(subscribed: false, decision: nil, offerId: nil)),
            Record(id: "c3", ts: at(7), user: user, body: .capabilities(.unauthorized)),
            Record(
                id: "r1", ts: at(8), user: user,
                body: .review(Review(conversion: "s1", decision: .hold, reason: .fraud, note: nil))),
            Record(id: "c4", ts: at(12), user: user, body: .capabilities(.eligible)),
        ]
        let kept = SealKeeping.kept(records, sealedBefore: 10 * Self.day)
        #expect(kept.sorted().map { records[$0].id } == ["c1", "p1", "c2", "p2", "s1", "s2", "l1", "c3", "r1"])
        // Whatever H, amounts or shared users: the kept records and the unsealed one attribute as all of them.
        for holding in [0, 30 * 24, 200 * 24] as [Int64] {
            for shared in [SharedUsers([]), SharedUsers(["U"])] {
                let settings = AttributionSettings(
                    windowMs: 720 * Self.hour, freshnessMs: 24 * Self.hour, holdingMs: holding * Self.hour,
                    sharedUsers: shared)
                let rest = records.indices.filter { kept.contains($0) || records[$0].ts >= 10 * Self.day }
                let whole = Attribution.attribute(userRecords: records, settings: settings).conversion
                let trimmed = Attribution.attribute(userRecords: rest.map { records[$0] }, settings: settings)
                    .conversion
                #expect(whole == trimmed, "H \(holding) h")
            }
        }
    }

    /// While the conversion is not sealed, a later conversion's `offerId` may name any sealed loaded presentation:
    /// every one stays, with its eligibility check; unloaded ones and checks no presentation reads go.
    @Test func beforeTheConversionIsSealedEveryLoadedPresentationStays() {
        let offer = Offer(affiliateToken: nil, campaignToken: nil, messageIdentifier: nil, itemID: nil)
        let records = (0..<4).flatMap { day -> [Record] in
            let ts = Int64(day) * Self.day
            return [
                Record(id: "c\(day)a", ts: ts, user: "u", body: .capabilities(.eligible)),
                Record(id: "c\(day)b", ts: ts + 1, user: "u", body: .capabilities(.eligible)),
                Record(id: "p\(day)", ts: ts + 2, user: "u", body: .presented(offer, loaded: day != 2)),
            ]
        }
        let kept = SealKeeping.kept(records, sealedBefore: 4 * Self.day).sorted().map { records[$0].id }
        #expect(kept == ["c0b", "p0", "c1b", "p1", "c3b", "p3"])
    }
}
