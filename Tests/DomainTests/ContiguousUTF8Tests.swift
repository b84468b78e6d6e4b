import OfferTrackDomain
import Testing

/// The byte scans that read a string's UTF-8 in place: small (stack) and large strings, ASCII and not.
@Suite struct ContiguousUTF8Tests {
    @Test func measureCountsScalarsAndControlCharacters() {
        #expect(Token.measure("") == (0, false))
        #expect(Token.measure("u-3ccbcd17416d892e") == (18, false))
        #expect(Token.measure("é😀a") == (3, false))
        #expect(Token.measure(String(repeating: "é", count: 40)) == (40, false))
        #expect(Token.measure("a\u{7F}") == (2, true))
        #expect(Token.measure("a\u{85}b") == (3, true))  // C2 85
        #expect(Token.measure("a\u{A0}b") == (3, false))  // C2 A0
        #expect(Token.measure(String(repeating: "x", count: 30) + "\n") == (31, true))
    }

    @Test func tokens() {
        #expect(Token.isAffiliateToken("Zed_fm"))
        #expect(Token.isAffiliateToken(String(repeating: "a", count: 64)))
        #expect(!Token.isAffiliateToken(String(repeating: "a", count: 65)))
        #expect(!Token.isAffiliateToken("zé"))
        #expect(!Token.isAffiliateToken(""))
        #expect(Token.campaignTokenProblem("spring é") == nil)
        #expect(Token.campaignTokenProblem("a long campaign with an &") == .reservedCharacter)
        #expect(Token.campaignTokenProblem(String(repeating: "é", count: 41)) == .length)
    }

    @Test func quoting() {
        #expect(JSONStringLiteral.quote("plain") == #""plain""#)
        #expect(
            JSONStringLiteral.quote("a \"long\" value with\ta tab and é") == #""a \"long\" value with\ta tab and é""#)
        var out: [UInt8] = []
        JSONStringLiteral.append("\u{8}\u{C}\r\u{1F}\\", to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #""\b\f\r\u001f\\""#)
    }
}
