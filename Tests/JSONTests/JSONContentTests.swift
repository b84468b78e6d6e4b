import JSON
import Testing

@testable import OfferTrackDomain

/// SPEC section 2's "identical content": the rule that separates `duplicate` from `id_conflict`.
@Suite struct JSONContentTests {
    private func same(_ a: String, _ b: String) throws -> Bool {
        let x = try JSONParser.parse(Array(a.utf8))
        let y = try JSONParser.parse(Array(b.utf8))
        let forward = JSONContent.isSame(x, y)
        #expect(JSONContent.isSame(y, x) == forward, "isSame must be symmetric")
        return forward
    }

    @Test(arguments: [
        // Member order and insignificant whitespace are ignored.
        (#"{"a":1,"b":2}"#, #"{"b":2,"a":1}"#),
        (#"{ "a" : [ 1 , 2 ] }"#, #"{"a":[1,2]}"#),
        (#"{"o":{"x":true,"y":null}}"#, #"{"o":{"y":null,"x":true}}"#),
        // Strings after unescaping.
        (#""\u0041""#, #""A""#),
        (#""\u00e9""#, "\"\u{E9}\""),
        (#""\/""#, #""/""#),
        (#""\ud83d\ude00""#, "\"😀\""),
        // Numbers by value.
        ("1", "1.0"), ("1", "1e0"), ("1", "10e-1"), ("1", "0.1e1"), ("1.0", "1E+0"), ("100", "1e2"),
        ("1.2", "12e-1"), ("-0", "0"), ("0", "0.000e7"), ("-0.0", "0e-5"), ("-1.50", "-15E-1"),
        ("123456789012345678901234567890", "1.2345678901234567890123456789e29"),
        ("1e99999999999999999999999", "10e99999999999999999999998"),
        ("1e-99999999999999999999999", "0.1e-99999999999999999999998"),
        ("0.1", "1e-1"),
    ])
    func identical(_ a: String, _ b: String) throws {
        #expect(try same(a, b))
    }

    @Test(arguments: [
        // NFC and NFD spellings of "é" are different content (exact scalars, no normalization).
        ("\"\u{E9}\"", "\"e\u{301}\""),
        (#""\u00e9""#, #""e\u0301""#),
        (#""K""#, #""\u212A""#),
        (#"{"K":1}"#, #"{"\u212A":1}"#),
        // Arrays in order.
        ("[1,2]", "[2,1]"),
        ("[1]", "[1,1]"),
        // Different member sets.
        (#"{"a":1}"#, #"{"a":1,"b":2}"#),
        (#"{"a":1}"#, #"{"b":1}"#),
        (#"{"a":null}"#, "{}"),
        // Different values and types.
        ("1", "1.01"), ("1", "-1"), ("1", "2"), ("1e2", "1e3"), ("0.1", "0.01"), ("10", "1"),
        ("1e99999999999999999999999", "1e99999999999999999999998"),
        (#""1""#, "1"), ("null", "false"), ("true", "false"), ("[]", "{}"), (#""a""#, #""a ""#),
    ])
    func different(_ a: String, _ b: String) throws {
        #expect(try !same(a, b))
    }

    @Test func swiftStringEqualityWouldWronglyMergeNormalizationForms() {
        // Why isSame compares scalars: Swift's String == applies canonical equivalence.
        #expect("\u{E9}" == "e\u{301}")
        #expect(!JSONContent.isSame(.string("\u{E9}"), .string("e\u{301}")))
    }

    @Test func comparesWholeRecords() throws {
        let a = #"{"type":"capabilities","id":"x1","ts":"2026-11-28T10:14:58Z","user":"u","authorization":3}"#
        let b = #"{"authorization":3.0,"user":"\u0075","ts":"2026-11-28T10:14:58Z","id":"x1","type":"capabilities"}"#
        #expect(try same(a, b))
        // Timestamps are compared as written, not as instants.
        let c = #"{"type":"capabilities","id":"x1","ts":"2026-11-28T11:14:58+01:00","user":"u","authorization":3}"#
        #expect(try !same(a, c))
    }

    @Test func comparesLargeObjectsRegardlessOfOrder() throws {
        let forward = (0..<40).map { "\"k\($0)\":\($0)" }
        let a = "{" + forward.joined(separator: ",") + "}"
        let b = "{" + forward.reversed().joined(separator: ",") + "}"
        #expect(try same(a, b))
        let changed = "{" + forward.dropLast().joined(separator: ",") + ",\"k39\":39.5}"
        #expect(try !same(a, changed))
        let renamed = "{" + forward.dropLast().joined(separator: ",") + ",\"k40\":39}"
        #expect(try !same(a, renamed))
    }
}
