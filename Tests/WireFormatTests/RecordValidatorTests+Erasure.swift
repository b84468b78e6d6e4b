import Testing

@testable import OfferTrackDomain
@testable import WireFormat

/// SPEC 3.5: `erasure` records.
extension RecordValidatorTests {
    @Test(arguments: erasureRows) func erasureRecords(_ row: Row) { checkErasure(row) }

    /// SPEC 3.5 in its order: the id's 100-character limit in the id's place, `ticket`, then a shared user (the
    /// SPEC's list here), all before the peer's right (the daemon's).
    static let erasureRows: [Row] = [
        Row("a ticket", erasure(#""ticket":"DSR-1""#), .valid(.erasure(ticket: "DSR-1"))),
        Row(
            "a ticket of 100 characters", erasure("\"ticket\":\"\(String(repeating: "t", count: 100))\""),
            .valid(.erasure(ticket: String(repeating: "t", count: 100)))),
        Row(
            "a ticket of 101 characters", erasure("\"ticket\":\"\(String(repeating: "t", count: 101))\""),
            .rejected(.invalidField, field: "ticket")),
        Row("ticket missing", erasure(""), .rejected(.missingField, field: "ticket")),
        Row("ticket null counts as absent", erasure(#""ticket":null"#), .rejected(.missingField, field: "ticket")),
        Row("ticket empty", erasure(#""ticket":"""#), .rejected(.invalidField, field: "ticket")),
        Row("ticket not a string", erasure(#""ticket":7"#), .rejected(.invalidField, field: "ticket")),
        Row(
            "ticket with a control character", erasure(#""ticket":"a\u0007""#),
            .rejected(.invalidField, field: "ticket")),
        Row(
            "an id of 100 characters",
            erasure(#""ticket":"t""#, id: "\"\(String(repeating: "e", count: 100))\""), .valid(.erasure(ticket: "t"))),
        Row(
            "an id of 101 characters is invalid in the id's place, before a bad ts",
            line(#""erasure""#, id: "\"\(String(repeating: "e", count: 101))\"", ts: #""soon""#, #""ticket":"t""#),
            .rejected(.invalidField, field: "id", id: String(repeating: "e", count: 101))),
        Row(
            "a shared user", erasure(#""ticket":"t""#, user: #""Anonymous""#), .rejected(.invalidField, field: "user")),
        Row(
            "a shared user without a ticket: the ticket first", erasure("", user: #""guest""#),
            .rejected(.missingField, field: "ticket")),
        Row(
            "a user that only starts like a shared one", erasure(#""ticket":"t""#, user: #""anonymous-7""#),
            .valid(.erasure(ticket: "t"))),
        Row(
            "an unknown member is kept", erasure(#""ticket":"t","requestedBy":{"team":"privacy"}"#),
            .valid(.erasure(ticket: "t"))),
    ]

    private func checkErasure(_ row: Row) {
        let verdict = RecordValidator.validate(Array(row.line.utf8), sharedUsers: .defaults)
        switch (row.expectation, verdict) {
        case (.valid(let body), .valid(let record)):
            #expect(record.body == body, "\(row.note)")
        case (.rejected(let code, let field, let id), .rejected(let rejectedID, let error)):
            #expect(error.code == code && error.field == field && rejectedID == id, "\(row.note): \(error)")
        default:
            Issue.record("\(row.note): \(verdict)")
        }
    }

    /// With `sharedUsers: []` the same id is a person like any other.
    @Test func aUserIsSharedOnlyByTheRulesInForce() {
        let line = Array(Self.erasure(#""ticket":"t""#, user: #""anonymous""#).utf8)
        guard case .valid = RecordValidator.validate(line, sharedUsers: .none) else {
            Issue.record("an erasure of anonymous refused with sharedUsers []")
            return
        }
        guard case .rejected = RecordValidator.validate(line, sharedUsers: SharedUsers(["ANONYMOUS"])) else {
            Issue.record("an erasure of a listed id accepted")
            return
        }
    }
}
