import Testing
import WireFormat

/// `RecordValidator.isValidID` on small and large strings, ASCII and not.
@Suite struct RecordIDTests {
    @Test func validIDs() {
        #expect(RecordValidator.isValidID("01M6A6FWYP000007WE"))
        #expect(RecordValidator.isValidID("a.b_c:d-e"))
        #expect(RecordValidator.isValidID(String(repeating: "Z", count: 128)))
        #expect(!RecordValidator.isValidID(String(repeating: "Z", count: 129)))
        #expect(!RecordValidator.isValidID(""))
        #expect(!RecordValidator.isValidID("id with space"))
        #expect(!RecordValidator.isValidID("idé"))
        #expect(!RecordValidator.isValidID(String(repeating: "a", count: 30) + "/"))
    }
}
