import JSON

/// What a journal's published manifest of a day says (SPEC 7): when it was first published, with which rules and
/// currency, and the hash of the CSV it published (which its stored lines must write).
struct PublishedManifest {
    var generatedAt: String?
    var currency: String?
    var rulesSha256: String?
    var sha256: String?

    init(_ bytes: [UInt8]) {
        guard case .object(let object)? = try? JSONParser.parse(bytes) else { return }
        func text(_ key: String) -> String? {
            guard case .string(let text)? = object[key] else { return nil }
            return text
        }
        generatedAt = text("generatedAt")
        currency = text("currency")
        rulesSha256 = text("rulesSha256")
        sha256 = text("sha256")
    }
}
