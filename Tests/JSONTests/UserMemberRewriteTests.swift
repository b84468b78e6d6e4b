import Testing

@testable import JSON

/// Renaming a line's person (SPEC 11): the top-level `user` value alone changes, every other byte stays.
@Suite struct UserMemberRewriteTests {
    @Test(arguments: [
        (#"{"type":"x","user":"u-1","ts":"t"}"#, #"{"type":"x","user":"erased:e","ts":"t"}"#),
        (#"{ "user" : "u-1" , "n":1}"#, #"{ "user" : "erased:e" , "n":1}"#),
        // A nested `user`, an escaped one in a string and a key spelled with an escape.
        (
            #"{"offer":{"user":"nested"},"note":"\"user\":\"x\"","us\u0065r":"u\u002d1"}"#,
            #"{"offer":{"user":"nested"},"note":"\"user\":\"x\"","us\u0065r":"erased:e"}"#
        ),
        (
            #"{"a":[1,{"user":"no"}],"user":"é-\ud83d\ude00","z":null}"#,
            #"{"a":[1,{"user":"no"}],"user":"erased:e","z":null}"#
        ),
    ])
    func onlyTheTopLevelUserChanges(line: String, renamed: String) {
        #expect(
            UserMemberRewrite.renaming(Array(line.utf8), to: "erased:e").map { String(decoding: $0, as: UTF8.self) }
                == renamed)
        #expect(UserMemberRewrite.user(of: Array(renamed.utf8)) == "erased:e")
    }

    @Test func aLineWithoutAUserIsLeftAlone() {
        #expect(UserMemberRewrite.renaming(Array(#"{"id":"x"}"#.utf8), to: "erased:e") == nil)
        #expect(UserMemberRewrite.renaming(Array(#"{"user":5}"#.utf8), to: "erased:e") == nil)
    }
}
