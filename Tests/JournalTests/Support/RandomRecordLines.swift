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

    /// A presentation, loaded seven times in eight, with the affiliate token `aff`, `b2`, `1010LKXY` (Crockford
    /// base32) or none, and (`campaigns`) a campaign token half the time (`spring`, or a UUID), and a message
    /// identifier and an item id a quarter of the time each.
    static func presented(head: String, campaigns: Bool = false, _ random: inout SeededGenerator) -> String {
        let loaded = Int.random(in: 0..<8, using: &random) == 0 ? #","loaded":false"# : ""
        let token = ["aff", "b2", "1010LKXY", nil][Int.random(in: 0..<4, using: &random)]
        let affiliate = token.map { #","affiliateToken":"\#($0)""# } ?? ""
        let campaignToken = ["spring", "9B2F0C3A-11D4-4E6B-A0C2-5D1E7F3B9A10"][Int.random(in: 0..<2, using: &random)]
        let campaign =
            campaigns && Int.random(in: 0..<2, using: &random) == 0 ? #","campaignToken":"\#(campaignToken)""# : ""
        let message = Int.random(in: 0..<4, using: &random) == 0 ? #","messageIdentifier":"playMusic""# : ""
        let item = Int.random(in: 0..<4, using: &random) == 0 ? #","itemID":"1440857781""# : ""
        return #"{"type":"offer.presented",\#(head),"offer":{"action":"subscribe"\#(affiliate)\#(campaign)"#
            + #"\#(message)\#(item)}\#(loaded)}"#
    }

    /// A record id unique to `tag` and `index`, in one of the shapes clients send: free text naming `user`, a
    /// ULID-like run of 18 Crockford base32 capitals, or a canonical UUID in lower or upper case (sealing stores
    /// each shape its own way, `PackedText`).
    static func id(tag: String, index: Int, user: String, _ random: inout SeededGenerator) -> String {
        var tagHash: UInt32 = 2_166_136_261
        for byte in tag.utf8 { tagHash = (tagHash ^ UInt32(byte)) &* 16_777_619 }
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            return "\(tag)\(index)-\(user)"
        case 1:
            let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
            func base32(_ value: UInt64, digits: Int) -> String {
                String((0..<digits).reversed().map { alphabet[Int(value >> UInt64(5 * $0) & 31)] })
            }
            return "01" + base32(UInt64(tagHash & 0x3FFF_FFFF), digits: 6) + base32(UInt64(index), digits: 10)
        default:
            let hex = String(tagHash, radix: 16).leftPadded(to: 8) + String(index, radix: 16).leftPadded(to: 24)
            let digits = Array(hex)
            let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(digits[$0]) }
            let uuid = groups.joined(separator: "-")
            return Int.random(in: 0..<2, using: &random) == 0 ? uuid : uuid.uppercased()
        }
    }

    /// A review of `conversion` deciding void, hold or release.
    static func review(head: String, conversion: String, _ random: inout SeededGenerator) -> String {
        let decision = ["void", "hold", "release"][Int.random(in: 0..<3, using: &random)]
        let reason = decision == "release" ? "" : #","reason":"fraud""#
        return #"{"type":"review",\#(head),"conversion":"\#(conversion)","decision":"\#(decision)"\#(reason)}"#
    }
}

extension String {
    /// The text with zeros before it up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
