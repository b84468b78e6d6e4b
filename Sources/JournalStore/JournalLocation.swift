/// Where the journal lives when no `--db` is given (SPEC section 6; the daemon and the CLI agree).
public enum JournalLocation {
    /// `$STATE_DIRECTORY/offertrack.db` when the variable is set (its first entry), else `./offertrack.db`.
    public static func defaultPath(stateDirectory: String?) -> String {
        guard let first = stateDirectory?.split(separator: ":").first, !first.isEmpty else {
            return "./offertrack.db"
        }
        return "\(first)/offertrack.db"
    }
}
