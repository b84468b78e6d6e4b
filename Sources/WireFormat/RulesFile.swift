import JSON
import OfferTrackDomain

/// A rules file's bytes and what they say: the rules, and the SHA-256 of the exact bytes (for export manifests).
public struct RulesFile: Sendable, Equatable {
    public let rules: CommissionRules
    /// Lowercase hex SHA-256 of the file's bytes.
    public let sha256: String

    /// Parses the bytes of a rules file (SPEC section 5).
    public init(bytes: [UInt8]) throws(RulesError) {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes)
        } catch {
            throw RulesError(path: nil, "the rules file is not valid JSON: \(error.message)")
        }
        rules = try CommissionRules(json: json)
        sha256 = SHA256.hex(of: bytes)
    }

    /// The built-in rules used when no file is given (no commissions; default windows).
    public static let builtIn = RulesFile(rules: .defaults, sha256: SHA256.hex(of: []))

    private init(rules: CommissionRules, sha256: String) {
        self.rules = rules
        self.sha256 = sha256
    }
}
