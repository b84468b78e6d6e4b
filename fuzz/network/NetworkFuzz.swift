// Compiled together with Sources/OfferTrackDomain, Sources/JSON, Sources/WireFormat and Sources/OutputFormats into one
// module by scripts/fuzz (no import needed).

/// libFuzzer entry for `NetworkReportFile.read` (SPEC section 13's network file): nothing may crash, reading is
/// deterministic, a refusal names a line of the file (the header is line 1), and what is read has only counts above
/// 0 in rows sorted as the SPEC orders them.
@_cdecl("LLVMFuzzerTestOneInput")
public func networkFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, let month = PayoutMonth("2026-11") else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let names: [NetworkReportFile.Column: String] = bytes.first == UInt8(ascii: "#") ? [.status: "state"] : [:]
    let first = Result { () throws(NetworkReportFile.Malformed) in
        try NetworkReportFile.read(bytes, month: month, headerNames: names)
    }
    let second = Result { () throws(NetworkReportFile.Malformed) in
        try NetworkReportFile.read(bytes, month: month, headerNames: names)
    }
    switch (first, second) {
    case (.failure(let one), .failure(let two)):
        precondition(one == two, "reading the same bytes twice fails differently")
        let lines = bytes.count { $0 == UInt8(ascii: "\n") } + 1
        precondition(one.line >= 1 && one.line <= lines, "the refusal names line \(one.line) of \(lines)")
    case (.success(let one), .success(let two)):
        precondition(one.rows == two.rows, "reading the same bytes twice differs")
        precondition(one.rows.allSatisfy { $0.theirs > 0 && $0.ours == 0 }, "a row counts what the file did not")
        for (earlier, later) in zip(one.rows, one.rows.dropFirst()) {
            precondition(
                (earlier.group.affiliateToken ?? "", earlier.group.campaignToken, earlier.status)
                    != (later.group.affiliateToken ?? "", later.group.campaignToken, later.status),
                "a group and status is listed twice")
        }
    default:
        preconditionFailure("reading the same bytes twice succeeds once")
    }
    return 0
}
