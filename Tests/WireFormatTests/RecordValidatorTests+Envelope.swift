import Testing

@testable import OfferTrackDomain
@testable import WireFormat

/// SPEC sections 2 and 3: the envelope and the fields every record has.
extension RecordValidatorTests {
    /// SPEC section 2: JSON, `type`, and which error wins.
    static let envelopeRows: [Row] = [
        Row("not JSON", "not json", .rejected(.invalidJSON, field: nil, id: nil)),
        Row("an array, not an object", #"[{"id":"r-1"}]"#, .rejected(.invalidJSON, field: nil, id: nil)),
        Row("a string, not an object", #""r-1""#, .rejected(.invalidJSON, field: nil, id: nil)),
        Row("spaces only", "   ", .rejected(.invalidJSON, field: nil, id: nil)),
        Row(
            "repeated member name: no id is reported", caps(#""id":"r-2","authorization":0"#),
            .rejected(.invalidJSON, field: nil, id: nil)),
        Row("NaN", caps(#""authorization":NaN"#), .rejected(.invalidJSON, field: nil, id: nil)),
        Row(
            "lone surrogate", line(user: #""\ud800""#, #""authorization":0"#),
            .rejected(.invalidJSON, field: nil, id: nil)),
        Row("type missing", line(nil, #""authorization":0"#), .rejected(.missingField, field: "type")),
        Row("type null counts as absent", line("null", #""authorization":0"#), .rejected(.missingField, field: "type")),
        Row("type unknown", line(#""capability""#, #""authorization":0"#), .rejected(.unknownType, field: nil)),
        Row("type not a string", line("3", #""authorization":0"#), .rejected(.unknownType, field: nil)),
        Row(
            "type is case-sensitive", line(#""Capabilities""#, #""authorization":0"#),
            .rejected(.unknownType, field: nil)),
        Row("type as an array", line(#"["capabilities"]"#, #""authorization":0"#), .rejected(.unknownType, field: nil)),
        Row(
            "unknown type and bad id: unknown_type wins, no id",
            line(#""bogus""#, id: #""a b""#, #""authorization":0"#),
            .rejected(.unknownType, field: nil, id: nil)),
        Row(
            "missing type and bad ts: missing type wins", line(nil, ts: #""yesterday""#, #""authorization":0"#),
            .rejected(.missingField, field: "type")),
        Row(
            "bad id and bad ts: id wins", line(id: #""a b""#, ts: #""yesterday""#, #""authorization":0"#),
            .rejected(.invalidField, field: "id", id: nil)),
        Row(
            "bad ts and bad user: ts wins", line(ts: #""2026-11-28 10:15:00Z""#, user: #""""#, #""authorization":0"#),
            .rejected(.invalidField, field: "ts")),
        Row(
            "bad user and bad app: user wins", line(user: "5", #""app":"","authorization":0"#),
            .rejected(.invalidField, field: "user")),
        Row(
            "bad app and bad device: app wins", caps(#""app":"","device":"","authorization":0"#),
            .rejected(.invalidField, field: "app")),
        Row(
            "bad device and bad own field: device wins", caps(#""device":1,"authorization":"x""#),
            .rejected(.invalidField, field: "device")),
        Row(
            "valid id is reported on a later failure", offer(#""affiliateToken":"a.b""#),
            .rejected(.invalidField, field: "offer.affiliateToken", id: "r-1")),
        Row(
            "unknown members are ignored", caps(#""authorization":0,"extra":{"nested":[1,{"x":null}]},"x":1e999"#),
            .valid(.capabilities(.unauthorized))),
    ]

    /// SPEC section 3: `id`, `ts`, `user`, `app`, `device`.
    static let commonFieldRows: [Row] = [
        Row("id missing", line(id: nil, #""authorization":0"#), .rejected(.missingField, field: "id", id: nil)),
        Row("id null", line(id: "null", #""authorization":0"#), .rejected(.missingField, field: "id", id: nil)),
        Row("id 128 chars", line(id: "\"\(id128)\"", #""authorization":0"#), .valid(.capabilities(.unauthorized))),
        Row(
            "id 129 chars", line(id: "\"\(id129)\"", #""authorization":0"#),
            .rejected(.invalidField, field: "id", id: nil)),
        Row("id empty", line(id: #""""#, #""authorization":0"#), .rejected(.invalidField, field: "id", id: nil)),
        Row(
            "id every allowed char", line(id: #""AZaz09._:-""#, #""authorization":0"#),
            .valid(.capabilities(.unauthorized))),
        Row(
            "id with a space", line(id: #""a b""#, #""authorization":0"#),
            .rejected(.invalidField, field: "id", id: nil)),
        Row(
            "id with a slash", line(id: #""a/b""#, #""authorization":0"#),
            .rejected(.invalidField, field: "id", id: nil)),
        Row(
            "id non-ASCII", line(id: #""caf\u00e9""#, #""authorization":0"#),
            .rejected(.invalidField, field: "id", id: nil)),
        Row("id a number", line(id: "12", #""authorization":0"#), .rejected(.invalidField, field: "id", id: nil)),
        Row("ts missing", line(ts: nil, #""authorization":0"#), .rejected(.missingField, field: "ts")),
        Row("ts null", line(ts: "null", #""authorization":0"#), .rejected(.missingField, field: "ts")),
        Row("ts a number", line(ts: "1795860900000", #""authorization":0"#), .rejected(.invalidField, field: "ts")),
        Row("ts Z", line(ts: #""2026-11-28T10:15:00Z""#, #""authorization":0"#), .validAt(1_795_860_900_000)),
        Row(
            "ts lower-case t and z", line(ts: #""2026-11-28t10:15:00z""#, #""authorization":0"#),
            .validAt(1_795_860_900_000)),
        Row(
            "ts offset +01:00", line(ts: #""2026-11-28T11:15:00.250+01:00""#, #""authorization":0"#),
            .validAt(1_795_860_900_250)),
        Row(
            "ts offset -05:30", line(ts: #""2026-11-28T04:45:00-05:30""#, #""authorization":0"#),
            .validAt(1_795_860_900_000)),
        Row(
            "ts fraction .9999 truncates", line(ts: #""2026-11-28T10:15:00.9999Z""#, #""authorization":0"#),
            .validAt(1_795_860_900_999)),
        Row(
            "ts negative epoch truncates", line(ts: #""1969-12-31T23:59:59.9999Z""#, #""authorization":0"#),
            .validAt(-1)),
        Row(
            "ts space separator", line(ts: #""2026-11-28 10:15:00Z""#, #""authorization":0"#),
            .rejected(.invalidField, field: "ts")),
        Row(
            "ts second 60", line(ts: #""2016-12-31T23:59:60Z""#, #""authorization":0"#),
            .rejected(.invalidField, field: "ts")),
        Row(
            "ts year 0000", line(ts: #""0000-01-01T00:00:00Z""#, #""authorization":0"#),
            .rejected(.invalidField, field: "ts")),
        Row("ts year 0001", line(ts: #""0001-01-01T00:00:00Z""#, #""authorization":0"#), .validAt(-62_135_596_800_000)),
        Row(
            "ts Feb 29 leap year", line(ts: #""2024-02-29T00:00:00Z""#, #""authorization":0"#),
            .validAt(1_709_164_800_000)),
        Row(
            "ts Feb 29 non-leap", line(ts: #""2026-02-29T00:00:00Z""#, #""authorization":0"#),
            .rejected(.invalidField, field: "ts")),
        Row(
            "ts without zone", line(ts: #""2026-11-28T10:15:00""#, #""authorization":0"#),
            .rejected(.invalidField, field: "ts")),
        Row("ts date only", line(ts: #""2026-11-28""#, #""authorization":0"#), .rejected(.invalidField, field: "ts")),
        Row("user missing", line(user: nil, #""authorization":0"#), .rejected(.missingField, field: "user")),
        Row("user null", line(user: "null", #""authorization":0"#), .rejected(.missingField, field: "user")),
        Row("user empty", line(user: #""""#, #""authorization":0"#), .rejected(.invalidField, field: "user")),
        Row("user a number", line(user: "7", #""authorization":0"#), .rejected(.invalidField, field: "user")),
        Row("user 128 chars", line(user: "\"\(id128)\"", #""authorization":0"#), .valid(.capabilities(.unauthorized))),
        Row(
            "user 129 chars", line(user: "\"\(id129)\"", #""authorization":0"#), .rejected(.invalidField, field: "user")
        ),
        Row(
            "user 128 two-byte scalars", line(user: "\"\(String(repeating: "é", count: 128))\"", #""authorization":0"#),
            .valid(.capabilities(.unauthorized))),
        Row(
            "user 129 two-byte scalars", line(user: "\"\(String(repeating: "é", count: 129))\"", #""authorization":0"#),
            .rejected(.invalidField, field: "user")),
        Row(
            "user with U+0085 escaped", line(user: #""u\u0085""#, #""authorization":0"#),
            .rejected(.invalidField, field: "user")),
        Row(
            "user with U+0085 raw", line(user: "\"u\u{85}\"", #""authorization":0"#),
            .rejected(.invalidField, field: "user")),
        Row(
            "user with U+009F", line(user: #""u\u009f""#, #""authorization":0"#),
            .rejected(.invalidField, field: "user")),
        Row(
            "user with U+007F", line(user: #""u\u007f""#, #""authorization":0"#),
            .rejected(.invalidField, field: "user")),
        Row(
            "user with U+001F", line(user: #""u\u001f""#, #""authorization":0"#),
            .rejected(.invalidField, field: "user")),
        Row("user with a tab", line(user: #""u\t""#, #""authorization":0"#), .rejected(.invalidField, field: "user")),
        Row(
            "user with U+00A0 is fine", line(user: #""u\u00a0""#, #""authorization":0"#),
            .valid(.capabilities(.unauthorized))),
        Row(
            "user with U+0100 is fine", line(user: #""u\u0100""#, #""authorization":0"#),
            .valid(.capabilities(.unauthorized))),
        Row(
            "app 255 chars", caps("\"app\":\"\(String(repeating: "a", count: 255))\",\"authorization\":0"),
            .valid(.capabilities(.unauthorized))),
        Row(
            "app 256 chars", caps("\"app\":\"\(String(repeating: "a", count: 256))\",\"authorization\":0"),
            .rejected(.invalidField, field: "app")),
        Row("app empty", caps(#""app":"","authorization":0"#), .rejected(.invalidField, field: "app")),
        Row("app null is absent", caps(#""app":null,"authorization":0"#), .valid(.capabilities(.unauthorized))),
        Row("app a number", caps(#""app":1,"authorization":0"#), .rejected(.invalidField, field: "app")),
        Row(
            "app with a control char", caps(#""app":"com.x\n","authorization":0"#),
            .rejected(.invalidField, field: "app")),
        Row(
            "device 128 chars", caps("\"device\":\"\(id128)\",\"authorization\":0"),
            .valid(.capabilities(.unauthorized))),
        Row(
            "device 129 chars", caps("\"device\":\"\(id129)\",\"authorization\":0"),
            .rejected(.invalidField, field: "device")),
        Row("device empty", caps(#""device":"","authorization":0"#), .rejected(.invalidField, field: "device")),
        Row(
            "device with U+0080", caps(#""device":"\u0080","authorization":0"#),
            .rejected(.invalidField, field: "device")),
        Row("device null is absent", caps(#""device":null,"authorization":0"#), .valid(.capabilities(.unauthorized))),
    ]
}
