import OfferTrackDomain
import TestSupport

/// Random journals for the join's property tests and the tests that compare a join with another (saved summaries):
/// windows small against the records' spread, and histories of every record type.
enum RandomHistories {
    /// Windows small against the records' spread, so that every rule's boundary is crossed often.
    static let settings = AttributionSettings(
        windowMs: 2 * 3_600_000, freshnessMs: 30 * 60_000, holdingMs: 3_600_000,
        sharedUsers: SharedUsers(["anonymous", "Guest"]))

    /// One random history: users of 1 to `largest` records of every type, on a minute grid of a few hours (so
    /// that equal timestamps are common), with reviews, lapses, shared ids and offerIds naming all sorts.
    static func lines(_ random: inout SeededGenerator, users: Int, largest: Int) -> [String] {
        var lines: [String] = []
        for number in 0..<users {
            let user = number == 0 ? "ANONYMOUS" : number == 1 ? "guest" : "u\(number)"
            let count = number == 2 ? largest : Int.random(in: 1...max(1, largest / (number + 1)), using: &random)
            var presentations: [String] = []
            var outcomes: [String] = []
            for index in 0..<count {
                let id = "\(user)-\(String(Int.random(in: 0...99_999, using: &random), radix: 36))-\(index)"
                let minute = Int.random(in: 0...(count > 500 ? 6_000 : 600), using: &random)
                let ts = Timestamp.format(1_795_000_000_000 + Int64(minute) * 60_000)
                let head = #""id":"\#(id)","ts":"\#(ts)","user":"\#(user)""#
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<30:
                    lines.append(RandomRecordLines.capabilities(head: head, &random))
                case 30..<60:
                    lines.append(RandomRecordLines.presented(head: head, &random))
                    presentations.append(id)
                case 60..<85:
                    let outcome = Int.random(in: 0..<3, using: &random) == 0 ? "declined" : "subscribed"
                    var named = ""
                    if !presentations.isEmpty, Int.random(in: 0..<2, using: &random) == 0 {
                        named = #","offerId":"\#(presentations.randomElement(using: &random) ?? "x")""#
                    } else if Int.random(in: 0..<10, using: &random) == 0 {
                        named = #","offerId":"u3-elsewhere-1""#
                    }
                    lines.append(#"{"type":"subscription.outcome",\#(head),"outcome":"\#(outcome)"\#(named)}"#)
                    if outcome == "subscribed" { outcomes.append(id) }
                default:
                    guard let conversion = outcomes.randomElement(using: &random) else { continue }
                    lines.append(RandomRecordLines.review(head: head, conversion: conversion, &random))
                }
            }
        }
        return lines
    }
}
