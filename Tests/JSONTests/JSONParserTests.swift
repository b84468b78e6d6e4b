import Testing

@testable import JSON
@testable import OfferTrackDomain

/// The strict parser behind SPEC section 2's `invalid_json`.
@Suite struct JSONParserTests {
    private func parse(_ bytes: [UInt8]) throws(RecordError) -> JSONValue { try JSONParser.parse(bytes) }

    private func parse(_ text: String) throws(RecordError) -> JSONValue { try parse(Array(text.utf8)) }

    @Test func parsesEveryKindOfValue() throws {
        let value = try parse(#" {"a":[1,-0.5e+3,true,false,null,"x"],"b":{},"c":[]} "#)
        let expected = JSONValue.object(
            JSONObject(members: [
                (
                    "a",
                    .array([
                        .number(JSONNumber(literal: "1")), .number(JSONNumber(literal: "-0.5e+3")), .bool(true),
                        .bool(false), .null, .string("x"),
                    ])
                ),
                ("b", .object(JSONObject(members: []))),
                ("c", .array([])),
            ]))
        #expect(value == expected)
    }

    @Test func keepsMemberOrderAndNumberLiterals() throws {
        guard case .object(let object) = try parse(#"{"z":1.50,"a":1E2,"m":-0}"#) else {
            Issue.record("not an object")
            return
        }
        #expect(object.members.map(\.key) == ["z", "a", "m"])
        #expect(object["z"] == .number(JSONNumber(literal: "1.50")))
        #expect(object["a"] == .number(JSONNumber(literal: "1E2")))
        #expect(object["m"] == .number(JSONNumber(literal: "-0")))
    }

    @Test(arguments: [" \t\r\n{}\r\n\t ", "{ }", "[ ]", "[ 1 , 2 ]", "{ \"a\" : 1 , \"b\" : 2 }"])
    func allowsRFC8259Whitespace(_ text: String) throws {
        _ = try parse(text)
    }

    @Test(arguments: [
        (#""\"\\\/\b\f\n\r\t""#, "\"\\/\u{08}\u{0C}\n\r\t"),
        (#""\u0041""#, "A"),
        (#""\u00e9\u00E9""#, "éé"),
        (#""\u20ac""#, "€"),
        (#""\ud83d\ude00""#, "😀"),
        (#""\uD834\uDD1E""#, "𝄞"),
        (#""a\u0000b""#, "a\u{0}b"),
        (#""plain é 😀 €""#, "plain é 😀 €"),
        (#""mixed é\n😀""#, "mixed é\n😀"),
    ])
    func unescapesStrings(_ text: String, _ expected: String) throws {
        guard case .string(let string) = try parse(text) else {
            Issue.record("not a string")
            return
        }
        #expect(Array(string.unicodeScalars) == Array(expected.unicodeScalars))
    }

    /// One row per rejection class of SPEC section 2 and RFC 8259.
    static let invalidTexts: [String] = [
        // Not JSON at all, empty, truncated.
        "", " ", "x", "{", "[", "{\"a\"", "{\"a\":", "{\"a\":1", "[1", "\"abc", "{'a':1}", "{a:1}", "/* c */{}",
        // Non-JSON literals.
        "NaN", "Infinity", "-Infinity", "[NaN]", "{\"a\":Infinity}", "nan", "True", "nul", "undefined", "truex",
        // Numbers.
        "01", "-01", "00", "1.", ".5", "+1", "1e", "1e+", "-", "0x10", "1.5.2", "--1", "1_000",
        // Trailing garbage and multiple values.
        "{} x", "{}{}", "1 2", "{}\n{}", "{},",
        // Trailing commas and missing separators.
        "[1,]", "{\"a\":1,}", "[,1]", "{,}", "[1 2]", "{\"a\":1 \"b\":2}", "{\"a\" 1}",
        // Repeated member names, also after unescaping and nested.
        "{\"a\":1,\"a\":2}", "{\"a\":1,\"\\u0061\":2}", "{\"x\":{\"a\":null,\"a\":null}}", "[{\"k\":1,\"k\":1}]",
        // Escapes.
        "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\U0041\"", "\"\\\"",
        // Lone surrogates.
        "\"\\ud800\"", "\"\\ud800x\"", "\"\\ud800\\u0041\"", "\"\\udc00\"", "\"\\ud800\\ud800\"", "\"\\udfff\\ud800\"",
        "\"\\ud800\\n\"",
        // Whitespace beyond RFC 8259's four.
        "\u{0C}{}", "{}\u{0B}", "\u{A0}{}",
    ]

    @Test(arguments: invalidTexts)
    func rejects(_ text: String) {
        #expect(throws: RecordError.self) { try parse(text) }
        do {
            _ = try parse(text)
        } catch {
            #expect(error.code == .invalidJSON)
            #expect(error.field == nil)
            #expect(!error.message.isEmpty)
        }
    }

    @Test(
        arguments: [
            [0x22, 0x09, 0x22],  // raw tab inside a string
            [0x22, 0x0A, 0x22],  // raw newline
            [0x22, 0x1F, 0x22],  // raw U+001F
            [0x22, 0x00, 0x22],  // raw NUL
        ] as [[UInt8]])
    func rejectsUnescapedControlCharacters(_ bytes: [UInt8]) {
        #expect(throws: RecordError.self) { try parse(bytes) }
    }

    /// Ill-formed UTF-8 per Unicode Table 3-7, inside a string and outside one.
    @Test(
        arguments: [
            [0xFF],  // never valid
            [0x80],  // lone continuation
            [0xC0, 0xAF],  // overlong '/'
            [0xC1, 0xBF],  // overlong
            [0xE0, 0x80, 0xAF],  // overlong 3-byte
            [0xF0, 0x80, 0x80, 0xAF],  // overlong 4-byte
            [0xED, 0xA0, 0x80],  // UTF-8-encoded surrogate U+D800
            [0xED, 0xBF, 0xBF],  // UTF-8-encoded surrogate U+DFFF
            [0xF4, 0x90, 0x80, 0x80],  // U+110000
            [0xF5, 0x80, 0x80, 0x80],  // lead byte beyond U+10FFFF
            [0xE2, 0x82],  // truncated €
            [0xE2, 0x28, 0xAC],  // bad continuation
            [0xF0, 0x9F, 0x98],  // truncated 😀
            [0xC3],  // truncated é
        ] as [[UInt8]])
    func rejectsInvalidUTF8(_ sequence: [UInt8]) {
        let inString: [UInt8] = [0x22, 0x61] + sequence + [0x22]
        let inKey: [UInt8] = Array("{\"".utf8) + sequence + Array("\":1}".utf8)
        let bare: [UInt8] = Array("[1]".utf8) + sequence
        #expect(throws: RecordError.self) { try parse(inString) }
        #expect(throws: RecordError.self) { try parse(inKey) }
        #expect(throws: RecordError.self) { try parse(bare) }
    }

    @Test func acceptsBoundaryUTF8() throws {
        // U+0080, U+07FF, U+0800, U+D7FF, U+E000, U+FFFF, U+10000, U+10FFFF.
        let bytes: [UInt8] =
            [0x22, 0xC2, 0x80, 0xDF, 0xBF, 0xE0, 0xA0, 0x80, 0xED, 0x9F, 0xBF, 0xEE, 0x80, 0x80, 0xEF, 0xBF, 0xBF]
            + [0xF0, 0x90, 0x80, 0x80, 0xF4, 0x8F, 0xBF, 0xBF, 0x22]
        guard case .string(let string) = try parse(bytes) else {
            Issue.record("not a string")
            return
        }
        #expect(string.unicodeScalars.map(\.value) == [0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF])
    }

    @Test func rejectsAByteOrderMark() {
        #expect(throws: RecordError.self) { try parse([0xEF, 0xBB, 0xBF] + Array("{}".utf8)) }
    }

    @Test func namesDifferingOnlyByNormalizationAreDistinct() throws {
        // NFC "é" and NFD "e\u0301" are different member names (exact scalars), as are "K" and KELVIN SIGN.
        _ = try parse("{\"\u{E9}\":1,\"e\u{301}\":2}")
        _ = try parse(#"{"K":1,"\u212A":2}"#)
    }

    @Test func detectsRepeatsInLargeObjects() throws {
        let members = (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        _ = try parse("{\(members)}")
        #expect(throws: RecordError.self) { try parse("{\(members),\"k7\":0}") }
        #expect(throws: RecordError.self) { try parse("{\(members),\"\\u006b39\":0}") }
    }

    @Test func limitsNestingDepth() throws {
        let limit = JSONParser.maximumDepth
        _ = try parse(String(repeating: "[", count: limit) + String(repeating: "]", count: limit))
        #expect(throws: RecordError.self) {
            try parse(String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1))
        }
        let objects = String(repeating: "{\"a\":", count: limit) + "1" + String(repeating: "}", count: limit)
        _ = try parse(objects)
        let deeper = String(repeating: "{\"a\":", count: limit + 1) + "1" + String(repeating: "}", count: limit + 1)
        #expect(throws: RecordError.self) { try parse(deeper) }
        // Far deeper input fails cleanly instead of exhausting the stack.
        #expect(throws: RecordError.self) { try parse(String(repeating: "[", count: 100_000)) }
    }

    @Test func parsesFromARawBuffer() throws {
        let bytes = Array(#"{"a":"b"}"#.utf8)
        let value = try bytes.withUnsafeBytes { buffer in try JSONParser.parse(buffer) }
        #expect(value == .object(JSONObject(members: [("a", .string("b"))])))
    }
}
