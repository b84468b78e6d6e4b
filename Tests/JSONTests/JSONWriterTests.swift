import JSON
import Testing

/// The writer behind every JSON the CLI prints: compact, members in the order given, one escaper.
@Suite struct JSONWriterTests {
    @Test func writesEveryKindCompactlyInTheOrderGiven() {
        let value = JSONValue.object([
            "z": .integer(-12), "a": .string("q\"\\\n\u{1}é"), "n": .null, "t": .bool(true), "f": .bool(false),
            "list": .array([.integer(Int64.max), .string(nil), .integer(nil as Int?), .array([]), .object([:])]),
        ])
        #expect(
            JSONWriter.text(value)
                == #"{"z":-12,"a":"q\"\\\n\u0001é","n":null,"t":true,"f":false,"list":[9223372036854775807,null,null,[],{}]}"#
        )
        #expect(JSONWriter.bytes(value) == Array(JSONWriter.text(value).utf8))
    }

    @Test(arguments: [
        #"{"b":[1,2.50,-0,1E3],"a":{"x":"\u00e9\ud83d\ude00"},"c":null}"#, #"[]"#, #""s""#, #"true"#,
    ])
    func parsedValuesWriteBackAsTheParserReadThem(text: String) throws {
        let value = try JSONParser.parse(Array(text.utf8))
        let written = JSONWriter.bytes(value)
        #expect(JSONContent.isSame(try JSONParser.parse(written), value))
    }
}
