// Compiled together with Sources/OfferTrackDomain and Sources/WireFormat into one module by scripts/fuzz (no import
// needed).

/// libFuzzer entry for `RulesFile(bytes:)`: nothing may crash, parsing is deterministic, and accepted rules keep
/// the SPEC section 5 invariants (amounts ≥ 0, `from` < `until`, positive windows, a 64-digit hash).
@_cdecl("LLVMFuzzerTestOneInput")
public func rulesFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let first = Result { () throws(RulesError) in try RulesFile(bytes: bytes) }
    let second = Result { () throws(RulesError) in try RulesFile(bytes: bytes) }
    precondition(first == second, "parsing the same bytes twice differs")
    guard case .success(let file) = first else { return 0 }
    precondition(file.sha256.utf8.count == 64, "the hash is not 64 hex digits")
    precondition(file.rules.settings.windowMs > 0 && file.rules.settings.freshnessMs > 0, "a window is not positive")
    for rule in file.rules.rules {
        precondition(rule.amountMinor >= 0, "a negative amount was accepted")
        if let from = rule.from, let until = rule.until { precondition(from < until, "from is not before until") }
        _ = file.rules.amount(
            affiliateToken: rule.affiliateToken, campaignToken: rule.campaignToken, at: rule.from ?? 0)
    }
    return 0
}
