import JSON
import JournalStore
import OfferTrackDomain
import Simulator
import WireFormat

/// The records of one very busy user (issue 31): a QA device, or a placeholder id a test farm sends for every
/// device, that comes back every few seconds for months. Deterministic, in strictly increasing time, every line
/// checked by `RecordValidator` (so each is a record the daemon accepts).
///
/// Each session is what an app does at launch: a capabilities check (authorized mostly; as an array of names, a
/// bitmask or the MusicKit `subscription` object), in two sessions of three the offer shown (a few not loaded),
/// and for half of those an outcome a little later (a quarter of them subscribed, some naming the presentation).
/// Sessions start 2–20 s after the previous one's last record.
struct HotUserStream {
    /// Not in the SPEC's default `sharedUsers`: the join attributes this user like any person.
    static let user = "qa-device-1"

    private var rng: SimulationRandom
    private var t: Int64
    private var counter: UInt64 = 1 << 37
    private var session: [Submission] = []
    private var sessionIndex = 0
    /// How many records `next()` has returned.
    private(set) var produced = 0

    init(seed: UInt64 = 31, start: Int64 = WorkloadSimulator.defaultStart) {
        rng = SimulationRandom(seed: seed)
        t = start
    }

    /// The next record.
    mutating func next() throws -> Submission {
        while sessionIndex >= session.count {
            session = try nextSession()
            sessionIndex = 0
        }
        defer {
            sessionIndex += 1
            produced += 1
        }
        return session[sessionIndex]
    }

    /// The next `count` records.
    mutating func take(_ count: Int) throws -> [Submission] {
        var records: [Submission] = []
        records.reserveCapacity(count)
        for _ in 0..<count { records.append(try next()) }
        return records
    }

    // MARK: Sessions

    private mutating func nextSession() throws -> [Submission] {
        var records: [Submission] = []
        t += between(2_000, 20_000)
        let profile = below(100)
        let fields: [String]
        switch profile {
        case ..<5:
            fields = [#""authorization":"denied""#]
        case ..<65:
            fields = [#""authorization":"authorized""#, capabilities(playback: false, eligible: true)]
        case ..<90:
            fields = [#""authorization":3"#, capabilities(playback: true, eligible: false)]
        default:
            fields = [#""authorization":"authorized""#, capabilities(playback: false, eligible: false)]
        }
        records.append(try emit("capabilities", fields))
        guard below(3) < 2 else { return records }
        t += between(200, 3_000)
        let presentation = try emit("offer.presented", presentationFields())
        records.append(presentation)
        guard below(2) == 0 else { return records }
        t += between(5_000, 60_000)
        let subscribed = below(4) == 0
        var outcome = [subscribed ? #""outcome":"subscribed""# : #""outcome":"declined""#]
        if below(10) < 6 { outcome.append(#""offerId":"\#(presentation.record.id)""#) }
        records.append(try emit("subscription.outcome", outcome))
        return records
    }

    private mutating func capabilities(playback: Bool, eligible: Bool) -> String {
        let cloud = below(2) == 0
        switch below(10) {
        case ..<5:
            var names: [String] = []
            if playback { names.append(#""musicCatalogPlayback""#) }
            if eligible { names.append(#""musicCatalogSubscriptionEligible""#) }
            if cloud || names.isEmpty { names.append(#""addToCloudMusicLibrary""#) }
            return #""capabilities":["# + names.joined(separator: ",") + "]"
        case ..<8:
            return #""capabilities":\#((playback ? 1 : 0) + (eligible ? 2 : 0) + (cloud ? 256 : 0))"#
        default:
            return #""subscription":{"canPlayCatalogContent":\#(playback),"canBecomeSubscriber":\#(eligible),"#
                + #""hasCloudLibraryEnabled":\#(cloud)}"#
        }
    }

    private mutating func presentationFields() -> [String] {
        var offer = [#""action":"subscribe""#]
        if below(100) < 85 { offer.append(#""affiliateToken":"\#(pick(["qa_radio", "1010lKxy", "aff-42"]))""#) }
        if below(100) < 60 { offer.append(#""campaignToken":"\#(pick(["spring26", "qa-build", "launch"]))""#) }
        if below(100) < 60 { offer.append(#""messageIdentifier":"\#(pick(["join", "addMusic", "playMusic"]))""#) }
        var fields = [#""offer":{"# + offer.joined(separator: ",") + "}"]
        if below(100) < 6 { fields.append(#""loaded":false"#) }
        return fields
    }

    /// One line of `type` at the current time, validated.
    private mutating func emit(_ type: String, _ fields: [String]) throws -> Submission {
        let id = Self.recordId(ts: t, counter: counter)
        counter += 1
        var parts = [
            #""type":"\#(type)""#, #""id":"\#(id)""#, #""ts":"\#(Timestamp.format(t))""#,
            #""user":"\#(Self.user)""#, #""app":"com.example.radio""#, #""device":"d-qa000001""#,
        ]
        parts += fields
        if below(100) < 5 { parts.append(#""appVersion":"5.\#(below(9)).\#(below(20))""#) }
        let line = Array(("{" + parts.joined(separator: ",") + "}").utf8)
        guard case .valid(let record) = RecordValidator.validate(line) else {
            throw BenchFailure(
                "the hot user's generator wrote an invalid line: \(String(decoding: line, as: UTF8.self))")
        }
        return Submission(record: record, line: line)
    }

    // MARK: Draws

    private mutating func below(_ bound: UInt64) -> UInt64 { bound.multipliedFullWidth(by: rng.next()).high }

    private mutating func between(_ low: Int64, _ high: Int64) -> Int64 { low + Int64(below(UInt64(high - low) + 1)) }

    private mutating func pick(_ items: [String]) -> String { items[Int(below(UInt64(items.count)))] }

    /// A ULID-like id like the simulator's: 10 Crockford base32 digits of the time, then 8 of a counter.
    static func recordId(ts: Int64, counter: UInt64) -> String { WorkloadSimulator.recordID(ts: ts, counter: counter) }

    // MARK: Realistic traffic with a hot user in it

    /// `submissions` with about `percent` % of their lines (drawn by a seeded generator, line by line) naming
    /// `user` instead: a placeholder id or a test device in the middle of real traffic. Erasures keep their user
    /// (an erasure of the hot user would rename all its later records); every other line keeps every other byte
    /// (`UserMemberRewrite`). Returns the lines and how many were rewritten.
    static func rewriting(
        _ submissions: [Submission], percent: UInt64, seed: UInt64 = 31
    ) throws -> (submissions: [Submission], rewritten: Int) {
        var rng = SimulationRandom(seed: seed)
        var rewritten = 0
        let result = try submissions.map { submission in
            let drawn = UInt64(100).multipliedFullWidth(by: rng.next()).high < percent
            guard drawn, submission.record.type != .erasure else { return submission }
            guard let line = UserMemberRewrite.renaming(submission.line, to: user),
                case .valid(let record) = RecordValidator.validate(line)
            else {
                throw BenchFailure("cannot rewrite \(String(decoding: submission.line, as: UTF8.self)) to \(user)")
            }
            rewritten += 1
            return Submission(record: record, line: line)
        }
        return (result, rewritten)
    }
}
