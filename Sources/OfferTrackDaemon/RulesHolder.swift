import OfferTrackDomain
import Posix
import WireFormat

/// The commission rules the daemon runs with; replaced only by a rules file that parses.
final class RulesHolder {
    let path: String?
    private(set) var current: RulesFile
    /// The error of the last failed reload, cleared by a good one.
    private(set) var lastError: String?

    init(path: String?) throws(RulesReloadError) {
        self.path = path
        current = try path.map(Self.load) ?? .builtIn
    }

    var summary: String {
        guard let path else { return "no rules file (default windows, no commissions)" }
        return "rules \(path): \(current.rules.rules.count) rules in \(current.rules.currency)"
    }

    /// Re-reads the rules file; on failure the previous rules stay in force.
    func reload() -> Result<String, RulesReloadError> {
        guard let path else { return .success(summary) }
        do {
            current = try Self.load(path)
            lastError = nil
            return .success(summary)
        } catch {
            lastError = error.description
            return .failure(error)
        }
    }

    static func load(_ path: String) throws(RulesReloadError) -> RulesFile {
        guard let bytes = FileSystem.readFile(path) else { throw RulesReloadError(description: "cannot read \(path)") }
        do {
            return try RulesFile(bytes: bytes)
        } catch {
            throw RulesReloadError(description: "\(path): \(error.located)")
        }
    }
}

/// A rules file that could not be used.
struct RulesReloadError: Error, CustomStringConvertible {
    let description: String
}
