import OfferTrackDomain

/// What operators and signed-out visitors add to the simulated traffic: reviews (rule 4.7), erasures (SPEC 3.5)
/// and visits under the shared id `anonymous` (rule 4.0), each drawn on a random stream of its own.
extension UserJourney {
    /// What operators decide about some conversions (rule 4.7): refunds and fraud voided, a few held for policy
    /// review and most of those released later.
    mutating func review(_ conversion: String, convertedAt: Int64) {
        let day = Timestamp.millisecondsPerDay
        let roll = reviewRNG.below(1000)
        if roll < 30 {
            let at = convertedAt + reviewRNG.int(in: (3 * day)...(25 * day))
            emitReview(
                conversion, number: 1, .void, .refund, note: "refund ticket R-\(reviewRNG.below(90_000) + 10_000)",
                at: at)
        } else if roll < 40 {
            let at = convertedAt + reviewRNG.int(in: (1 * day)...(10 * day))
            emitReview(conversion, number: 1, .void, .fraud, note: "install farm, same device ring", at: at)
        } else if roll < 60 {
            let held = convertedAt + reviewRNG.int(in: (1 * day)...(5 * day))
            emitReview(conversion, number: 1, .hold, .policy, note: nil, at: held)
            if reviewRNG.chance(70) {
                emitReview(
                    conversion, number: 2, .release, nil, note: "checked",
                    at: held + reviewRNG.int(in: day...(30 * day)))
            }
        }
    }

    /// Writes one `review` record, as `offertrack review` would send it (no app or device).
    mutating func emitReview(
        _ conversion: String, number: Int, _ decision: ReviewDecision, _ reason: ReviewReason?, note: String?,
        at ts: Int64
    ) {
        let id = "rv-\(conversion)-\(number)"
        var parts = [
            "\"type\":\"review\"", "\"id\":\"\(id)\"", "\"ts\":\"\(Timestamp.format(ts))\"",
            "\"user\":" + JSONStringLiteral.quote(user), "\"conversion\":\"\(conversion)\"",
            "\"decision\":\"\(decision.rawValue)\"",
        ]
        if let reason { parts.append("\"reason\":\"\(reason.rawValue)\"") }
        if let note { parts.append("\"note\":" + JSONStringLiteral.quote(note)) }
        let review = Review(conversion: conversion, decision: decision, reason: reason, note: note)
        records.append(
            SimulatedRecord(
                line: "{" + parts.joined(separator: ",") + "}",
                record: Record(id: id, ts: ts, user: user, body: .review(review)), isDuplicate: false))
    }

    /// A signed-out visit near `t0` (SPEC rule 4.0): apps send one placeholder, `anonymous`, for everyone who is not
    /// signed in, so these records are journaled and counted but never attributed. Drawn on a stream of their own,
    /// with ids from a counter range the other users never reach, so every other user's records stay as they were.
    static func generateSignedOut(index: Int, seed: UInt64, t0: Int64) -> [SimulatedRecord] {
        let userKey = SimulationRandom.mix(UInt64(index) ^ SimulationRandom.mix(seed ^ 0xA404))
        var journey = UserJourney(
            rng: SimulationRandom(seed: userKey), user: "anonymous", app: apps[index % apps.count], device: nil,
            userKey: userKey)
        var counter: UInt64 = (1 << 39) + UInt64(index) * 16
        var t = t0 + journey.rng.int(in: 1_000...600_000)
        journey.emitCheck(.eligible, at: t, counter: &counter)
        t += journey.rng.int(in: 200...3_000)
        let presentation = journey.emitPresentation(at: t, counter: &counter)
        if journey.rng.chance(40) {
            t += journey.rng.int(in: 5_000...300_000)
            journey.emitOutcome(subscribed: true, offerId: presentation.id, at: t, counter: &counter)
        }
        return journey.records
    }

    /// An operator's `erasure` of `user` (SPEC 3.5), as `offertrack erase` sends it (no app or device).
    static func erasure(of user: String, index: Int, at ts: Int64) -> SimulatedRecord {
        let id = "er-" + recordId(ts: ts, counter: (1 << 38) + UInt64(index))
        let ticket = "DSR-\(10_000 + index)"
        let line =
            #"{"type":"erasure","id":"\#(id)","ts":"\#(Timestamp.format(ts))","user":"\#(JSONStringLiteral.quote(user).dropFirst().dropLast())","ticket":"\#(ticket)"}"#
        return SimulatedRecord(
            line: line, record: Record(id: id, ts: ts, user: user, body: .erasure(ticket: ticket)), isDuplicate: false)
    }
}
