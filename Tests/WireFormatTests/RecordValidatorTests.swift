import Testing

@testable import OfferTrackDomain
@testable import WireFormat

@Suite struct RecordValidatorTests {
    /// One row of the validator tables: a line and what SPEC sections 2–3 say must come of it.
    struct Row: Sendable, CustomTestStringConvertible {
        enum Expectation: Sendable {
            /// Accepted with this body.
            case valid(RecordBody)
            /// Accepted with this `ts` (UTC epoch milliseconds).
            case validAt(Int64)
            /// Rejected with this code and field; the rejected `id` is `r-1` unless `id` says otherwise.
            case rejected(ErrorCode, field: String?, id: String? = "r-1")
        }

        var note: String
        var line: String
        var expectation: Expectation

        init(_ note: String, _ line: String, _ expectation: Expectation) {
            self.note = note
            self.line = line
            self.expectation = expectation
        }

        var testDescription: String { note }
    }

    @Test(arguments: envelopeRows) func envelope(_ row: Row) { check(row) }
    @Test(arguments: commonFieldRows) func commonFields(_ row: Row) { check(row) }
    @Test(arguments: capabilitiesRows) func capabilitiesRecords(_ row: Row) { check(row) }
    @Test(arguments: presentedRows) func presentedRecords(_ row: Row) { check(row) }
    @Test(arguments: outcomeRows) func outcomeRecords(_ row: Row) { check(row) }
    @Test(arguments: reviewRows) func reviewRecords(_ row: Row) { check(row) }

    private func check(_ row: Row, sourceLocation: SourceLocation = #_sourceLocation) {
        let verdict = RecordValidator.validate(Array(row.line.utf8))
        switch (row.expectation, verdict) {
        case (.valid(let body), .valid(let record)):
            #expect(record.body == body, sourceLocation: sourceLocation)
        case (.validAt(let ts), .valid(let record)):
            #expect(record.ts == ts, sourceLocation: sourceLocation)
        case (.rejected(let code, let field, let id), .rejected(let rejectedID, let error)):
            #expect(error.code == code, "\(error.message)", sourceLocation: sourceLocation)
            #expect(error.field == field, "\(error.message)", sourceLocation: sourceLocation)
            #expect(rejectedID == id, sourceLocation: sourceLocation)
            #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
            if let field {
                #expect(error.message.contains(field), "message must name the field", sourceLocation: sourceLocation)
            }
        default:
            Issue.record("expected \(row.expectation), got \(verdict)", sourceLocation: sourceLocation)
        }
    }

    @Test func validRecordCarriesCommonFields() {
        let verdict = RecordValidator.validate(
            Array(Self.caps(#""authorization":"denied","app":"com.x","device":"d""#).utf8))
        #expect(
            verdict == .valid(Record(id: "r-1", ts: 1_795_860_900_000, user: "u-1", body: .capabilities(.unauthorized)))
        )
    }

    @Test func userKeepsItsExactScalars() {
        guard
            case .valid(let record) = RecordValidator.validate(
                Array(Self.line(user: #""e\u0301""#, #""authorization":0"#).utf8))
        else {
            Issue.record("not valid")
            return
        }
        #expect(record.user.unicodeScalars.map(\.value) == [0x65, 0x301])
    }

    @Test func rawBufferEntryPointAgrees() {
        let bytes = Array(Self.offer(#""affiliateToken":"t""#).utf8)
        let fromBuffer = bytes.withUnsafeBytes { RecordValidator.validate($0, sharedUsers: .defaults) }
        #expect(fromBuffer == RecordValidator.validate(bytes))
        #expect(
            fromBuffer
                == .valid(Record(id: "r-1", ts: 1_795_860_900_000, user: "u-1", body: Self.presented(affiliate: "t")))
        )
    }
}
