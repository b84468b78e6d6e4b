import Testing

@testable import OfferTrackDomain
@testable import WireFormat

/// SPEC 3.4: `review` records.
extension RecordValidatorTests {
    /// SPEC 3.4, row by row, in the order of its table: conversion, decision, reason, note.
    static let reviewRows: [Row] = [
        Row(
            "void for fraud", review(#""conversion":"o-1","decision":"void","reason":"fraud""#),
            .valid(reviewed(.void, .fraud))),
        Row(
            "hold for policy, with a note",
            review(#""conversion":"o-1","decision":"hold","reason":"policy","note":"ask""#),
            .valid(reviewed(.hold, .policy, note: "ask"))),
        Row(
            "release without a reason", review(#""conversion":"o-1","decision":"release""#), .valid(reviewed(.release))),
        Row(
            "release with a reason", review(#""conversion":"o-1","decision":"release","reason":"other""#),
            .valid(reviewed(.release, .other))),
        Row(
            "each reason: refund", review(#""conversion":"o-1","decision":"void","reason":"refund""#),
            .valid(reviewed(.void, .refund))),
        Row(
            "each reason: duplicate", review(#""conversion":"o-1","decision":"void","reason":"duplicate""#),
            .valid(reviewed(.void, .duplicate))),
        Row(
            "each reason: test", review(#""conversion":"o-1","decision":"hold","reason":"test""#),
            .valid(reviewed(.hold, .test))),
        Row(
            "each reason: network_rejected",
            review(#""conversion":"o-1","decision":"void","reason":"network_rejected""#),
            .valid(reviewed(.void, .networkRejected))),
        Row(
            "reason is case-sensitive", review(#""conversion":"o-1","decision":"void","reason":"Network_Rejected""#),
            .rejected(.invalidField, field: "reason")),
        Row(
            "unknown members are kept and ignored",
            review(#""conversion":"o-1","decision":"void","reason":"fraud","ticket":{"n":1}"#),
            .valid(reviewed(.void, .fraud))),
        Row(
            "conversion missing", review(#""decision":"void","reason":"fraud""#),
            .rejected(.missingField, field: "conversion")),
        Row(
            "conversion null counts as absent", review(#""conversion":null,"decision":"void","reason":"fraud""#),
            .rejected(.missingField, field: "conversion")),
        Row(
            "conversion not an id", review(#""conversion":"o 1","decision":"void","reason":"fraud""#),
            .rejected(.invalidField, field: "conversion")),
        Row(
            "conversion 129 characters",
            review("\"conversion\":\"\(id129)\",\"decision\":\"void\",\"reason\":\"fraud\""),
            .rejected(.invalidField, field: "conversion")),
        Row(
            "conversion 128 characters", review("\"conversion\":\"\(id128)\",\"decision\":\"release\""),
            .valid(reviewed(.release, conversion: id128))),
        Row(
            "conversion a number", review(#""conversion":7,"decision":"void","reason":"fraud""#),
            .rejected(.invalidField, field: "conversion")),
        Row(
            "decision missing", review(#""conversion":"o-1","reason":"fraud""#),
            .rejected(.missingField, field: "decision")),
        Row(
            "decision unknown", review(#""conversion":"o-1","decision":"cancel","reason":"fraud""#),
            .rejected(.invalidField, field: "decision")),
        Row(
            "decision is case-sensitive", review(#""conversion":"o-1","decision":"Void","reason":"fraud""#),
            .rejected(.invalidField, field: "decision")),
        Row(
            "reason required for void", review(#""conversion":"o-1","decision":"void""#),
            .rejected(.missingField, field: "reason")),
        Row(
            "reason required for hold, null counts as absent",
            review(#""conversion":"o-1","decision":"hold","reason":null"#), .rejected(.missingField, field: "reason")),
        Row(
            "reason unknown", review(#""conversion":"o-1","decision":"void","reason":"chargeback""#),
            .rejected(.invalidField, field: "reason")),
        Row(
            "reason unknown on a release", review(#""conversion":"o-1","decision":"release","reason":"oops""#),
            .rejected(.invalidField, field: "reason")),
        Row(
            "note empty", review(#""conversion":"o-1","decision":"release","note":"""#),
            .rejected(.invalidField, field: "note")),
        Row(
            "note of 500 characters",
            review(
                "\"conversion\":\"o-1\",\"decision\":\"release\",\"note\":\"\(String(repeating: "é", count: 500))\""),
            .valid(reviewed(.release, note: String(repeating: "é", count: 500)))),
        Row(
            "note of 501 characters",
            review(
                "\"conversion\":\"o-1\",\"decision\":\"release\",\"note\":\"\(String(repeating: "n", count: 501))\""),
            .rejected(.invalidField, field: "note")),
        Row(
            "note with a control character", review(#""conversion":"o-1","decision":"release","note":"a\u0085b""#),
            .rejected(.invalidField, field: "note")),
        Row(
            "note not a string", review(#""conversion":"o-1","decision":"release","note":5"#),
            .rejected(.invalidField, field: "note")),
        Row(
            "bad conversion and bad decision: conversion wins", review(#""conversion":"o 1","decision":"x""#),
            .rejected(.invalidField, field: "conversion")),
        Row(
            "bad decision and missing reason: decision wins", review(#""conversion":"o-1","decision":"x""#),
            .rejected(.invalidField, field: "decision")),
        Row(
            "missing reason and bad note: reason wins", review(#""conversion":"o-1","decision":"void","note":"""#),
            .rejected(.missingField, field: "reason")),
        Row(
            "bad user before the review's own fields", line(#""review""#, user: "5", #""decision":"x""#),
            .rejected(.invalidField, field: "user")),
    ]
}
