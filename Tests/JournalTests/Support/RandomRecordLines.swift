import OfferTrackDomain
import TestSupport

/// Random record lines of every kind for the property tests, each given its `head` (`"id":…,"ts":…,"user":…`).
enum RandomRecordLines {
    /// A capabilities check in any authorization state and capability set.
    static func capabilities(head: String, _ random: inout SeededGenerator) -> String {
        let bits = [0, 1, 2, 3, 256, 258][Int.random(in: 0..<6, using: &random)]
        let authorization = Int.random(in: 0..<10, using: &random) == 0 ? 1 : 3
        return #"{"type":"capabilities",\#(head),"authorization":\#(authorization),"capabilities":\#(bits)}"#
    }

    /// A presentation, loaded seven times in eight, with the affiliate token `aff`, `b2` or none, and
    /// (`campaigns`) the campaign token `spring` half the time.
    static func presented(head: String, campaigns: Bool = false, _ random: inout SeededGenerator) -> String {
        let loaded = Int.random(in: 0..<8, using: &random) == 0 ? #","loaded":false"# : ""
        let token = ["aff", "b2", nil][Int.random(in: 0..<3, using: &random)]
        let affiliate = token.map { #","affiliateToken":"\#($0)""# } ?? ""
        let campaign = campaigns && Int.random(in: 0..<2, using: &random) == 0 ? #","campaignToken":"spring""# : ""
        return
            #"{"type":"offer.presented",\#(head),"offer":{"action":"subscribe"\#(affiliate)\#(campaign)}\#(loaded)}"#
    }

    /// A review of `conversion` deciding void, hold or release.
    static func review(head: String, conversion: String, _ random: inout SeededGenerator) -> String {
        let decision = ["void", "hold", "release"][Int.random(in: 0..<3, using: &random)]
        let reason = decision == "release" ? "" : #","reason":"fraud""#
        return #"{"type":"review",\#(head),"conversion":"\#(conversion)","decision":"\#(decision)"\#(reason)}"#
    }
}
