import OfferTrackDomain
import Simulator
import Testing

/// `UserSummary`: what the join reads instead of a returning user's history when their new records come after it.
@Suite struct UserSummaryTests {
    typealias A = AttributionRecords
    static let minute: Int64 = 60_000
    /// F 30 minutes, W 2 hours, H 1 hour.
    static let settings = AttributionSettings(windowMs: 2 * A.hour, freshnessMs: 30 * minute, holdingMs: A.hour)

    /// A user checked (eligible) at minute 0 and shown an offer at minute 5, no conversion.
    static let checked = UserSummary(
        latestCheck: .init(ts: A.t0, id: "c0", decision: .eligible), latestLoadedPresentationTs: A.t0 + 5 * minute)
    /// The same user, converted at minute 6.
    static let converted = UserSummary(
        latestCheck: checked.latestCheck, latestLoadedPresentationTs: checked.latestLoadedPresentationTs,
        firstSubscribedTs: A.t0 + 6 * minute)

    static func review(_ id: String, _ at: Int64) -> Record {
        Record(
            id: id, ts: A.t0 + at, user: "u1",
            body: .review(Review(conversion: "o", decision: .void, reason: .fraud, note: nil)))
    }

    /// `count` random records of one user (checks, presentations, one in five not loaded, outcomes) at whole minutes
    /// from `from` to three hours after it, their ids `prefix` and their index.
    static func randomRecords(_ count: Int, from: Int64, prefix: String, _ random: inout SimulationRandom) -> [Record] {
        (0..<count).map { index in
            let id = "\(prefix)\(index)"
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3: return randomCheck(id, from: from, &random)
            case 3..<6:
                return A.presented(id, randomMinute(from, &random), loaded: Int.random(in: 0..<5, using: &random) > 0)
            case 6..<8: return A.outcome(id, randomMinute(from, &random))
            default: return A.outcome(id, randomMinute(from, &random), subscribed: false)
            }
        }
    }

    /// A check with a random decision at a random whole minute of the three hours from `from`.
    static func randomCheck(_ id: String, from: Int64, _ random: inout SimulationRandom) -> Record {
        let at = randomMinute(from, &random)
        return A.check(id, at, EligibilityDecision.allCases.randomElement(using: &random) ?? .eligible)
    }

    static func randomMinute(_ from: Int64, _ random: inout SimulationRandom) -> Int64 {
        from + Int64.random(in: 0...(3 * A.hour), using: &random) / minute * minute
    }

    /// Each case by hand from rules 4.1–4.6: the added records (in journal order) and the eligibility of each added
    /// loaded presentation, or nil when the summary cannot decide them.
    @Test(
        arguments: [
            // The summary's check is 10 minutes old: eligible.
            ("a presentation after the summary's check", checked, [A.presented("p1", 10 * minute)], [true]),
            // 40 minutes is past F: no fresh check.
            ("a presentation past F", checked, [A.presented("p1", 40 * minute)], [false]),
            (
                "an added check before it decides", checked,
                [A.check("c1", 20 * minute, .ineligible), A.presented("p1", 25 * minute)], [false]
            ),
            (
                "an added check after it does not", checked,
                [A.presented("p1", 10 * minute), A.check("c1", 11 * minute, .ineligible)], [true]
            ),
            ("no check ever", UserSummary.empty, [A.presented("p1", 10 * minute)], [false]),
            (
                "an unloaded presentation, even an early one", checked,
                [A.presented("p1", -60 * minute, loaded: false)], []
            ),
            // At the latest presentation's time, the check could be the latest before it (ties go by id).
            ("a check at the latest presentation's time", checked, [A.check("c1", 5 * minute)], nil),
            ("a presentation at the check's time", checked, [A.presented("p1", 0)], nil),
            ("a late check", checked, [A.check("c1", 3 * minute)], nil),
            ("a first conversion", checked, [A.outcome("o", 30 * minute)], nil),
            (
                "a second conversion", converted, [A.outcome("o2", 30 * minute), A.presented("p1", 31 * minute)],
                [false]
            ),
            ("a conversion before the first", converted, [A.outcome("o0", 5 * minute + 1)], nil),
            ("a lapse in the holding period", converted, [A.outcome("d", 60 * minute, subscribed: false)], nil),
            ("a lapsing check in it", converted, [A.check("c1", 66 * minute, .eligible)], nil),
            ("a lapse after it", converted, [A.outcome("d", 67 * minute, subscribed: false)], []),
            ("a subscriber's check in it is no lapse", converted, [A.check("c1", 30 * minute, .subscriber)], []),
            ("a lapse with no conversion", checked, [A.outcome("d", 30 * minute, subscribed: false)], []),
            ("a review", converted, [review("r", 30 * minute)], nil),
        ] as [(String, UserSummary, [Record], [Bool]?)])
    func decidesOnlyWhatComesAfterIt(_ name: String, summary: UserSummary, added: [Record], eligible: [Bool]?) {
        let facts = summary.inOrderPresentations(added, Self.settings)
        #expect(facts?.map(\.fact.eligible) == eligible, "\(name)")
        #expect(facts?.allSatisfy { added[$0.index].id == $0.fact.id } ?? true, "\(name)")
    }

    /// Each case by hand: a lone check the summary decides (it is the check returned) or leaves to the full join.
    @Test(
        arguments: [
            // After the latest check (minute 0), before the latest presentation (minute 5): the visit's check late.
            ("a check between the latest check and presentation", checked, [A.check("c1", 3 * minute)], true),
            ("at the latest check's time, a later id", checked, [A.check("c1", 0)], true),
            ("at the latest check's time, an earlier id", checked, [A.check("c", 0)], false),
            ("before the latest check", checked, [A.check("c1", -1 * minute)], false),
            ("no check before", UserSummary(latestLoadedPresentationTs: A.t0), [A.check("c1", -9 * minute)], true),
            ("with another record", checked, [A.check("c1", 3 * minute), A.presented("p1", 4 * minute)], false),
            ("a presentation alone", checked, [A.presented("p1", 3 * minute)], false),
            // The conversion (minute 6) is after it: its candidate may be after the check.
            ("before the conversion", converted, [A.check("c1", 3 * minute)], false),
            ("at the conversion's time", converted, [A.check("c1", 6 * minute)], false),
            // After the conversion: a lapse in the holding period (an hour) may change it, a subscriber's check not.
            ("a lapsing check in the holding period", converted, [A.check("c1", 30 * minute, .eligible)], false),
            ("a subscriber's check in it", converted, [A.check("c1", 30 * minute, .subscriber)], true),
            ("a lapsing check after it", converted, [A.check("c1", 67 * minute, .ineligible)], true),
        ] as [(String, UserSummary, [Record], Bool)])
    func decidesALoneCheckAfterItsLatestCheck(_ name: String, summary: UserSummary, added: [Record], decides: Bool) {
        let check = summary.lateCheck(added, Self.settings)
        #expect(check.map { [$0] } == (decides ? added : nil), "\(name)")
    }

    /// Against `Attribution.attribute`: wherever the summary decides a lone check, adding it changes only the
    /// verdicts of the loaded presentations after it, each now the rule 4.4 verdict of that check, and not the
    /// conversion.
    @Test func aDecidedLoneCheckChangesOnlyThePresentationsAfterIt() {
        var random = SimulationRandom(seed: 4_712)
        var decided = 0
        var changed = 0
        for round in 0..<4_000 {
            let history = Self.randomRecords(Int.random(in: 0...10, using: &random), from: 0, prefix: "h", &random)
            let check = Self.randomCheck("c", from: 0, &random)
            guard let decidedCheck = UserSummary.empty.adding(history).lateCheck([check], Self.settings) else {
                continue
            }
            decided += 1
            #expect(decidedCheck == check)
            let before = Attribution.attribute(userRecords: history, settings: Self.settings)
            let after = Attribution.attribute(userRecords: history + [check], settings: Self.settings)
            guard case .capabilities(let decision) = check.body else { continue }
            let expected = before.presentations.map { fact -> PresentationFact in
                guard RecordOrder.precedes(ts: check.ts, id: check.id, ts: fact.ts, id: fact.id) else { return fact }
                var redecided = fact
                redecided.eligible =
                    AttributionRules.eligibility(
                        check: (check.ts, decision), presentationAt: fact.ts, Self.settings) == .passes
                return redecided
            }
            if expected != before.presentations { changed += 1 }
            #expect(after.presentations == expected, "round \(round)")
            #expect(after.conversion == before.conversion, "round \(round)")
        }
        // Both kinds of round occur: the test compares something.
        #expect(decided > 500)
        #expect(changed > 30)
    }

    @Test func addingKeepsTheLatestCheckInJournalOrder() {
        let summary = UserSummary.empty.adding([
            A.check("b", 10, .eligible), A.check("a", 10, .ineligible), A.presented("p", 20), A.presented("q", 5),
            A.outcome("o2", 40), A.outcome("o1", 30), A.check("z", 9, .subscriber),
        ])
        #expect(summary.latestCheck == .init(ts: A.t0 + 10, id: "b", decision: .eligible))
        #expect(summary.latestLoadedPresentationTs == A.t0 + 20)
        #expect(summary.firstSubscribedTs == A.t0 + 30)
        #expect(summary.adding([A.check("c", 10, .unauthorized)]).latestCheck?.id == "c")
    }

    /// Against `Attribution.attribute`: random histories and random records after them; wherever the summary
    /// decides, its verdicts are the added presentations' in the whole history's attribution, every earlier
    /// presentation keeps its verdict, and the conversion is unchanged.
    @Test func agreesWithAttributionWhereverItDecides() {
        var random = SimulationRandom(seed: 47)
        var decided = 0
        for round in 0..<4_000 {
            let history = Self.randomRecords(Int.random(in: 0...8, using: &random), from: 0, prefix: "h", &random)
            let added = RecordOrder.sorted(
                Self.randomRecords(Int.random(in: 1...6, using: &random), from: 2 * A.hour, prefix: "a", &random))
            guard let facts = UserSummary.empty.adding(history).inOrderPresentations(added, Self.settings) else {
                continue
            }
            decided += 1
            let before = Attribution.attribute(userRecords: history, settings: Self.settings)
            let after = Attribution.attribute(userRecords: history + added, settings: Self.settings)
            let addedIDs = Set(added.map(\.id))
            #expect(
                after.presentations.filter { addedIDs.contains($0.id) } == facts.map(\.fact), "round \(round)")
            #expect(after.presentations.filter { !addedIDs.contains($0.id) } == before.presentations, "round \(round)")
            #expect(after.conversion == before.conversion, "round \(round)")
        }
        // Most rounds decide: the test compares something.
        #expect(decided > 1_000)
    }
}
