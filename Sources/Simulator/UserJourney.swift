import OfferTrackDomain

/// One simulated user's records: capability checks, presentations and outcomes, in time order.
///
/// Used by `WorkloadSimulator`; every line it writes is valid per SPEC section 3.
struct UserJourney {
    var rng: SimulationRandom
    let user: String
    private let app: String?
    private let device: String?
    var records: [SimulatedRecord] = []
    /// Operators' decisions draw on their own stream, so adding them left every other record as it was.
    var reviewRNG: SimulationRandom

    static let affiliateTokens = ["1010lKxy", "1l3vbKq", "partner_radio", "1000lMxz-7", "Zed_fm", "aff-42"]
    static let campaignTokens = [
        "spring26", "black-friday", "fall,promo", "say \"hi\"", "été-2026", "launch 2026", "Zulu", "a",
    ]
    static let messageIdentifiers = ["join", "addMusic", "connect", "playMusic"]
    static let apps = ["com.example.radio", "com.example.karaoke", "com.example.podcasts"]

    /// What StoreKit would report for this user.
    enum Profile {
        case eligible
        case subscriber
        case ineligible
        /// Not authorized: the raw `SKCloudServiceAuthorizationStatus` value (0, 1 or 2).
        case unauthorized(Int)
    }

    private struct Capabilities {
        var playback: Bool
        var eligible: Bool
        var cloud: Bool

        var decision: EligibilityDecision {
            playback ? .subscriber : eligible ? .eligible : .ineligible
        }
    }

    init(rng: SimulationRandom, user: String, app: String?, device: String?, userKey: UInt64) {
        self.rng = rng
        reviewRNG = SimulationRandom(seed: SimulationRandom.mix(userKey ^ 0x0EF1_E3E5))
        self.user = user
        self.app = app
        self.device = device
    }

    /// The records of user number `index`, starting around `t0`; ids draw on the shared `counter`.
    static func generate(index: Int, seed: UInt64, t0: Int64, counter: inout UInt64) -> [SimulatedRecord] {
        let userKey = SimulationRandom.mix(UInt64(index) ^ SimulationRandom.mix(seed))
        var rng = SimulationRandom(seed: SimulationRandom.mix(userKey &+ seed))
        let app = rng.chance(90) ? rng.pick(apps) : nil
        let device = rng.chance(50) ? "d-" + hex(rng.next() >> 32, digits: 8) : nil
        var journey = UserJourney(
            rng: rng, user: "u-" + hex(userKey, digits: 16), app: app, device: device, userKey: userKey)
        journey.run(t0: t0, counter: &counter)
        return journey.records
    }

    private mutating func run(t0: Int64, counter: inout UInt64) {
        let profile: Profile
        if rng.chance(12) {
            profile = .unauthorized(Int(rng.below(3)))
        } else {
            let roll = rng.below(100)
            profile = roll < 68 ? .eligible : roll < 86 ? .subscriber : .ineligible
        }
        var t = t0
        // Most users are checked before the offer; a user with no presentation is always checked (every user has
        // at least one record).
        let checked = rng.chance(92)
        if checked { emitCheck(profile, at: t, counter: &counter) }
        if rng.chance(4) { t += rng.int(in: 86_400_001...108_000_000) }  // a stale check
        var presentations: [(id: String, loaded: Bool)] = []
        let count = rng.chance(4) ? 0 : 1 + Int(rng.below(3))
        if count == 0, !checked { emitCheck(profile, at: t, counter: &counter) }
        for number in 0..<count {
            t += number == 0 ? rng.int(in: 200...3_000) : rng.int(in: 1_000...90_000)
            if number > 0, rng.chance(30) {
                emitCheck(profile, at: t, counter: &counter)
                t += rng.int(in: 100...2_000)
            }
            presentations.append(emitPresentation(at: t, counter: &counter))
        }
        let subscribes: Bool
        switch profile {
        case _ where presentations.isEmpty: subscribes = rng.chance(30)
        case .eligible: subscribes = rng.chance(38)
        case .subscriber: subscribes = rng.chance(25)
        case .ineligible: subscribes = rng.chance(5)
        case .unauthorized: subscribes = rng.chance(3)
        }
        guard subscribes else {
            if rng.chance(55) {
                t += rng.int(in: 5_000...300_000)
                emitOutcome(subscribed: false, offerId: offerId(presentations), at: t, counter: &counter)
            }
            return
        }
        if rng.chance(10) {
            t += rng.int(in: 5_000...180_000)
            emitOutcome(subscribed: false, offerId: offerId(presentations), at: t, counter: &counter)
            t += rng.int(in: 3_600_000...259_200_000)
        } else if rng.chance(2) {
            t += AttributionSettings.defaults.windowMs + rng.int(in: 3_600_000...432_000_000)
        } else {
            t += rng.int(in: 5_000...600_000)
        }
        let conversion = emitOutcome(subscribed: true, offerId: offerId(presentations), at: t, counter: &counter)
        let convertedAt = t
        if rng.chance(12) {
            t += rng.int(in: 60_000...172_800_000)
            emitOutcome(subscribed: true, offerId: offerId(presentations), at: t, counter: &counter)
        }
        afterConversion(at: t, counter: &counter)
        review(conversion, convertedAt: convertedAt)
    }

    /// What the app sees after a conversion (rule 4.6): the free trial (a month) ends unpaid for some, who lose
    /// playback at a later launch; some decline the offer shown again; paying members keep playback; some leave
    /// long after any holding period.
    private mutating func afterConversion(at conversion: Int64, counter: inout UInt64) {
        let day = Timestamp.millisecondsPerDay
        let unpaid = Capabilities(playback: false, eligible: true, cloud: rng.chance(50))
        let roll = rng.below(100)
        if roll < 25 {
            emitCheck(unpaid, at: conversion + rng.int(in: (30 * day)...(36 * day)), counter: &counter)
        } else if roll < 32 {
            emitOutcome(
                subscribed: false, offerId: nil, at: conversion + rng.int(in: (2 * day)...(20 * day)), counter: &counter
            )
        } else if roll < 72 {
            let member = Capabilities(playback: true, eligible: false, cloud: true)
            emitCheck(member, at: conversion + rng.int(in: (1 * day)...(60 * day)), counter: &counter)
        } else if roll < 80 {
            emitCheck(unpaid, at: conversion + rng.int(in: (50 * day)...(120 * day)), counter: &counter)
        }
    }

    /// The records of user number `index` as a returning user: visits spread over `[t0, t0 + span)`, each starting
    /// with the capability check an app makes at launch, some showing the offer (and an outcome minutes later);
    /// about six records a user. A member keeps playback at later visits; a trial that ends unpaid loses it.
    static func generateReturning(
        index: Int, seed: UInt64, t0: Int64, span: Int64, counter: inout UInt64
    ) -> [SimulatedRecord] {
        let userKey = SimulationRandom.mix(UInt64(index) ^ SimulationRandom.mix(seed ^ 0xBAC))
        var rng = SimulationRandom(seed: SimulationRandom.mix(userKey &+ seed))
        let app = rng.chance(90) ? rng.pick(apps) : nil
        let device = rng.chance(50) ? "d-" + hex(rng.next() >> 32, digits: 8) : nil
        var journey = UserJourney(
            rng: rng, user: "u-" + hex(userKey, digits: 16), app: app, device: device, userKey: userKey)
        journey.runReturning(t0: t0, span: span, counter: &counter)
        return journey.records
    }

    private mutating func runReturning(t0: Int64, span: Int64, counter: inout UInt64) {
        let roll = rng.below(100)
        var profile: Profile =
            roll < 10 ? .unauthorized(Int(rng.below(3))) : roll < 70 ? .eligible : roll < 88 ? .subscriber : .ineligible
        let visits = 2 + Int(rng.below(4))
        var t = t0 + rng.int(in: 0...max(0, span / 4))
        var subscribedAt: Int64?
        var paid = false
        var presentations: [(id: String, loaded: Bool)] = []
        for _ in 0..<visits {
            if let start = subscribedAt {
                // After the trial month the member pays, or playback is gone.
                let playback = paid || t - start < 30 * Timestamp.millisecondsPerDay
                let capabilities = Capabilities(playback: playback, eligible: !playback, cloud: rng.chance(50))
                emitCheck(capabilities, at: t, counter: &counter)
            } else {
                emitCheck(profile, at: t, counter: &counter)
            }
            if subscribedAt == nil, rng.chance(60) {
                t += rng.int(in: 200...3_000)
                presentations.append(emitPresentation(at: t, counter: &counter))
                t += rng.int(in: 5_000...300_000)
                let subscribes: Bool
                switch profile {
                case .eligible: subscribes = rng.chance(30)
                case .subscriber: subscribes = rng.chance(10)
                case .ineligible, .unauthorized: subscribes = rng.chance(3)
                }
                if subscribes {
                    let conversion = emitOutcome(
                        subscribed: true, offerId: offerId(presentations), at: t, counter: &counter)
                    review(conversion, convertedAt: t)
                    subscribedAt = t
                    paid = rng.chance(70)
                    profile = .subscriber
                } else if rng.chance(50) {
                    emitOutcome(subscribed: false, offerId: offerId(presentations), at: t, counter: &counter)
                }
            }
            t += rng.int(in: 3_600_000...max(3_600_000, span / Int64(visits)))
        }
    }

    /// The `offerId` an app would send: usually the last presentation, sometimes another, an unloaded one or an
    /// id the journal does not have; often none.
    private mutating func offerId(_ presentations: [(id: String, loaded: Bool)]) -> String? {
        guard let last = presentations.last, rng.chance(60) else { return nil }
        let roll = rng.below(100)
        if roll < 75 { return last.id }
        if roll < 85, let first = presentations.first { return first.id }
        if roll < 95, let unloaded = presentations.first(where: { !$0.loaded }) { return unloaded.id }
        return "01UNKNOWN" + Self.hex(rng.next() >> 24, digits: 10)
    }

    // MARK: - Records

    mutating func emitCheck(_ profile: Profile, at ts: Int64, counter: inout UInt64) {
        var fields: [String] = []
        let decision: EligibilityDecision
        switch profile {
        case .unauthorized(let raw):
            decision = .unauthorized
            let names = ["notDetermined", "denied", "restricted"]
            fields.append("\"authorization\":" + (rng.chance(70) ? "\"\(names[raw])\"" : String(raw)))
            if rng.chance(30) {
                fields.append(capabilitiesField(Capabilities(playback: false, eligible: false, cloud: false)))
            }
        case .eligible, .subscriber, .ineligible:
            emitCheck(capabilities(for: profile), at: ts, counter: &counter)
            return
        }
        emit("capabilities", at: ts, fields: fields, body: .capabilities(decision), counter: &counter)
    }

    /// An authorized capabilities check reporting `capabilities`.
    private mutating func emitCheck(_ capabilities: Capabilities, at ts: Int64, counter: inout UInt64) {
        let fields = [
            "\"authorization\":" + (rng.chance(70) ? "\"authorized\"" : "3"), capabilitiesField(capabilities),
        ]
        emit("capabilities", at: ts, fields: fields, body: .capabilities(capabilities.decision), counter: &counter)
    }

    private mutating func capabilities(for profile: Profile) -> Capabilities {
        let cloud = rng.chance(50)
        switch profile {
        case .eligible: return Capabilities(playback: false, eligible: true, cloud: cloud)
        case .subscriber: return Capabilities(playback: true, eligible: false, cloud: true)
        case .ineligible, .unauthorized: return Capabilities(playback: false, eligible: false, cloud: cloud)
        }
    }

    /// `capabilities` as an array of names or a bitmask, or the MusicKit `subscription` object (never an empty
    /// array: `0` says the same).
    private mutating func capabilitiesField(_ c: Capabilities) -> String {
        let roll = rng.below(100)
        if roll < 50, c.playback || c.eligible || c.cloud {
            var names: [String] = []
            if c.playback { names.append("\"musicCatalogPlayback\"") }
            if c.eligible { names.append("\"musicCatalogSubscriptionEligible\"") }
            if c.cloud { names.append("\"addToCloudMusicLibrary\"") }
            if c.eligible, rng.chance(3) { names.append("\"musicCatalogSubscriptionEligible\"") }
            return "\"capabilities\":[" + names.joined(separator: ",") + "]"
        }
        if roll < 80 {
            let mask = (c.playback ? 1 : 0) + (c.eligible ? 2 : 0) + (c.cloud ? 256 : 0)
            return "\"capabilities\":\(mask)"
        }
        return "\"subscription\":{\"canPlayCatalogContent\":\(c.playback),\"canBecomeSubscriber\":\(c.eligible),"
            + "\"hasCloudLibraryEnabled\":\(c.cloud)}"
    }

    mutating func emitPresentation(at ts: Int64, counter: inout UInt64) -> (id: String, loaded: Bool) {
        var offerFields = ["\"action\":\"subscribe\""]
        let affiliate = rng.chance(85) ? rng.pick(Self.affiliateTokens) : nil
        let campaign = rng.chance(60) ? rng.pick(Self.campaignTokens) : nil
        let message = rng.chance(60) ? rng.pick(Self.messageIdentifiers) : nil
        if let affiliate { offerFields.append("\"affiliateToken\":" + JSONStringLiteral.quote(affiliate)) }
        if let campaign { offerFields.append("\"campaignToken\":" + JSONStringLiteral.quote(campaign)) }
        if let message { offerFields.append("\"messageIdentifier\":\"\(message)\"") }
        var itemID: String?
        let itemRoll = rng.below(100)
        if itemRoll < 30 {
            let digits = String(rng.int(in: 100_000_000...1_999_999_999))
            itemID = digits
            offerFields.append((itemRoll < 20 ? "\"itemID\":" : "\"iTunesItemIdentifier\":") + "\"\(digits)\"")
        }
        if rng.chance(3) { offerFields.append("\"placement\":\"onboarding\"") }
        let loaded = !rng.chance(6)
        var fields = ["\"offer\":{" + offerFields.joined(separator: ",") + "}"]
        if !loaded {
            fields.append("\"loaded\":false")
        } else if rng.chance(20) {
            fields.append("\"loaded\":true")
        }
        let offer = Offer(
            affiliateToken: affiliate, campaignToken: campaign, messageIdentifier: message, itemID: itemID)
        let id = emit(
            "offer.presented", at: ts, fields: fields, body: .presented(offer, loaded: loaded), counter: &counter)
        return (id, loaded)
    }

    @discardableResult
    mutating func emitOutcome(
        subscribed: Bool, offerId: String?, at ts: Int64, counter: inout UInt64
    ) -> String {
        var fields: [String] = []
        var decision: EligibilityDecision?
        if rng.chance(40) {
            fields.append(subscribed ? "\"outcome\":\"subscribed\"" : "\"outcome\":\"declined\"")
        } else {
            let capabilities = Capabilities(playback: subscribed, eligible: !subscribed, cloud: rng.chance(50))
            decision = capabilities.decision
            fields.append(capabilitiesField(capabilities))
        }
        if let offerId { fields.append("\"offerId\":\"\(offerId)\"") }
        let body = RecordBody.outcome(subscribed: subscribed, decision: decision, offerId: offerId)
        return emit("subscription.outcome", at: ts, fields: fields, body: body, counter: &counter)
    }

    /// Writes one record line with the common fields first; returns its id.
    @discardableResult
    private mutating func emit(
        _ type: String,
        at rawTs: Int64,
        fields: [String],
        body: RecordBody,
        counter: inout UInt64
    ) -> String {
        var ts = rawTs
        let written: String
        let roll = rng.below(100)
        if roll < 86 {
            written = Timestamp.format(ts)
        } else if roll < 92 {
            ts -= ((ts % 1_000) + 1_000) % 1_000
            let text = Timestamp.format(ts)
            written = String(text.prefix(19)) + "Z"
        } else if roll < 99 {
            written = Timestamp.format(ts, offsetMinutes: rng.pick([60, -300, 330, 540, -180]))
        } else {
            written = Timestamp.format(ts).replacingT()
        }
        let id = Self.recordId(ts: ts, counter: counter)
        counter &+= 1
        var parts = ["\"type\":\"\(type)\"", "\"id\":\"\(id)\"", "\"ts\":\"\(written)\""]
        parts.append("\"user\":" + JSONStringLiteral.quote(user))
        if let app { parts.append("\"app\":\"\(app)\"") }
        if let device { parts.append("\"device\":\"\(device)\"") }
        parts += fields
        if rng.chance(5) { parts.append("\"appVersion\":\"5.\(rng.below(9)).\(rng.below(20))\"") }
        let line = "{" + parts.joined(separator: ",") + "}"
        records.append(
            SimulatedRecord(line: line, record: Record(id: id, ts: ts, user: user, body: body), isDuplicate: false))
        return id
    }

    // MARK: - Ids

    private static let base32 = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    /// A ULID-like id: 10 Crockford base32 digits of the time, then 8 of a counter; byte order is time order.
    static func recordId(ts: Int64, counter: UInt64) -> String {
        var bytes = [UInt8](repeating: 0, count: 18)
        var time = UInt64(bitPattern: ts) & ((1 << 50) - 1)
        for i in stride(from: 9, through: 0, by: -1) {
            bytes[i] = base32[Int(time & 31)]
            time >>= 5
        }
        var count = counter
        for i in stride(from: 17, through: 10, by: -1) {
            bytes[i] = base32[Int(count & 31)]
            count >>= 5
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

extension String {
    /// The RFC 3339 text with lowercase `t` and `z` (accepted by SPEC section 3).
    fileprivate func replacingT() -> String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0 == "T" ? "t" : $0 == "Z" ? "z" : $0 }))
    }
}
