import JournalStore
import OfferTrackDomain
import Posix
import WireFormat

/// The commission rules the daemon runs with; replaced only by a rules file that parses and whose windows are
/// those the journal's days were sealed with (SPEC 12).
final class RulesHolder {
    let path: String?
    /// The journal, whose seal state fixes the windows.
    let journalPath: String
    private(set) var current: RulesFile
    /// The error of the last failed reload, cleared by a good one.
    private(set) var lastError: String?

    init(path: String?, journalPath: String) throws(RulesReloadError) {
        self.path = path
        self.journalPath = journalPath
        if let path {
            current = try Self.load(path, journalPath: journalPath)
        } else {
            current = try Self.checked(.builtIn, path: "the built-in rules (no --rules)", journalPath: journalPath)
        }
    }

    var summary: String {
        guard let path else { return "no rules file (default windows, no commissions)" }
        return "rules \(path): \(current.rules.rules.count) rules in \(current.rules.currency)"
    }

    /// Re-reads the rules file; on failure the previous rules stay in force.
    func reload() -> Result<String, RulesReloadError> {
        guard let path else { return .success(summary) }
        do {
            current = try Self.load(path, journalPath: journalPath)
            lastError = nil
            return .success(summary)
        } catch {
            lastError = error.description
            return .failure(error)
        }
    }

    static func load(_ path: String, journalPath: String) throws(RulesReloadError) -> RulesFile {
        guard let bytes = FileSystem.readFile(path) else { throw RulesReloadError(description: "cannot read \(path)") }
        let rules: RulesFile
        do {
            rules = try RulesFile(bytes: bytes)
        } catch {
            throw RulesReloadError(description: "\(path): \(error.located)")
        }
        return try checked(rules, path: path, journalPath: journalPath)
    }

    /// `rules`, unless the journal's days were sealed with other windows.
    private static func checked(
        _ rules: RulesFile, path: String, journalPath: String
    ) throws(RulesReloadError) -> RulesFile {
        guard CurrentProcess.fileSize(journalPath) != nil,
            let journal = try? ReadOnlyJournal(path: journalPath, schema: .anyVersion),
            let state = try? journal.sealState(), let refusal = state.check(rules.rules.settings)
        else { return rules }
        throw RulesReloadError(description: "\(path): \(refusal.located)")
    }
}

/// A rules file that could not be used.
struct RulesReloadError: Error, CustomStringConvertible {
    let description: String
}
