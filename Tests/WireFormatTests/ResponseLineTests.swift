import OfferTrackDomain
import Testing
import WireFormat

/// Answer lines byte for byte: ids written as they are or escaped, sequence numbers in decimal.
@Suite struct ResponseLineTests {
    static func text(_ response: ResponseLine) -> String { String(decoding: response.encoded, as: UTF8.self) }

    @Test func acceptedAndDuplicateAnswers() {
        #expect(
            Self.text(.accepted(id: "01M6A6FWYP000007WE", seq: 42))
                == #"{"id":"01M6A6FWYP000007WE","status":"accepted","seq":42}"# + "\n")
        #expect(Self.text(.duplicate(id: "a", seq: 7)) == #"{"id":"a","status":"duplicate","seq":7}"# + "\n")
    }

    @Test(arguments: [Int64(0), 1, 9, 10, 99, 100, 1_234_567_890, Int64.max, -1, -10, Int64.min])
    func sequenceNumbersAreWrittenAsStringWritesThem(seq: Int64) {
        #expect(Self.text(.accepted(id: "x", seq: seq)) == #"{"id":"x","status":"accepted","seq":\#(seq)}"# + "\n")
    }

    @Test func idsNeedingEscapesAreEscaped() {
        let id = "q\"b\\n\n\t\u{1}é"
        #expect(
            Self.text(.accepted(id: id, seq: 1))
                == #"{"id":"q\"b\\n\n\t\u0001é","status":"accepted","seq":1}"# + "\n")
        // Long enough not to be a small string.
        let long = String(repeating: "a", count: 40) + "\""
        #expect(
            Self.text(.duplicate(id: long, seq: 2)).hasPrefix(#"{"id":""# + String(repeating: "a", count: 40) + #"\"""#)
        )
    }

    @Test func rejections() {
        let error = RecordError(.invalidField, "ts must be \"RFC 3339\"", field: "ts")
        #expect(
            Self.text(.rejected(id: "r-1", error))
                == #"{"id":"r-1","status":"rejected","error":{"code":"invalid_field","message":"ts must be \"RFC 3339\"","field":"ts"}}"#
                + "\n")
        #expect(
            Self.text(.rejected(id: nil, RecordError(.invalidJSON, "bad")))
                == #"{"id":null,"status":"rejected","error":{"code":"invalid_json","message":"bad"}}"# + "\n")
    }

    @Test func encodingAppendsToWhatIsThere() {
        var out = Array("previous\n".utf8)
        ResponseLine.accepted(id: "b", seq: 3).encode(into: &out)
        #expect(
            String(decoding: out, as: UTF8.self) == "previous\n" + #"{"id":"b","status":"accepted","seq":3}"# + "\n")
    }
}
