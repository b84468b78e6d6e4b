/// The token syntax of SPEC 3.2, checked in one place for records (`RecordValidator`) and the rules file
/// (`CommissionRules(json:)`).
public enum Token {
    /// Why a campaign token is not one, in the order they are checked.
    public enum CampaignTokenProblem: Sendable, Equatable {
        /// Not 1–40 Unicode scalars.
        case length
        /// A control character (U+0000–U+001F, U+007F–U+009F).
        case controlCharacter
        /// One of `?`, `!`, `&`.
        case reservedCharacter
    }

    /// The longest campaign token, in Unicode scalars.
    public static let maximumCampaignTokenLength = 40

    /// 1–64 characters of `[A-Za-z0-9_-]`.
    public static func isAffiliateToken(_ text: String) -> Bool {
        text.withContiguousUTF8(isAffiliateToken(bytes:))
    }

    private static func isAffiliateToken(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 1 && bytes.count <= 64 else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
    }

    /// 1–40 Unicode scalars, no control characters, none of `?`, `!`, `&`.
    public static func isCampaignToken(_ text: String) -> Bool { campaignTokenProblem(text) == nil }

    /// What is wrong with `text` as a campaign token; nil when it is one.
    public static func campaignTokenProblem(_ text: String) -> CampaignTokenProblem? {
        let (scalars, hasControl) = measure(text)
        if scalars < 1 || scalars > maximumCampaignTokenLength { return .length }
        if hasControl { return .controlCharacter }
        let reserved = text.withContiguousUTF8 { bytes in
            bytes.contains { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "!") || $0 == UInt8(ascii: "&") }
        }
        return reserved ? .reservedCharacter : nil
    }

    /// The Unicode scalars in `text`, and whether any is a control character (U+0000–U+001F, U+007F–U+009F):
    /// what every text field of a record is checked for (SPEC 3.2), tokens included.
    public static func measure(_ text: String) -> (scalars: Int, hasControl: Bool) {
        text.withContiguousUTF8(measure(bytes:))
    }

    private static func measure(bytes: UnsafeBufferPointer<UInt8>) -> (scalars: Int, hasControl: Bool) {
        var scalars = 0
        var hasControl = false
        var previous: UInt8 = 0
        var index = 0
        if let base = UnsafeRawPointer(bytes.baseAddress) {
            // Eight printable ASCII bytes at a time (after them, `previous` cannot be 0xC2).
            while bytes.count - index >= 8 {
                let word = ByteWord.load(base, at: index)
                let other =
                    ByteWord.nonASCII(word) | ByteWord.bytes(of: word, below: 0x20)
                    | ByteWord.bytes(of: word, equalTo: 0x7F)
                guard other == 0 else { break }
                scalars += 8
                index += 8
            }
        }
        for byte in bytes[index...] {
            if byte & 0xC0 != 0x80 { scalars += 1 }
            // U+0080–U+009F are encoded as C2 80 – C2 9F.
            if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && byte <= 0x9F && byte >= 0x80) {
                hasControl = true
            }
            previous = byte
        }
        return (scalars, hasControl)
    }
}
