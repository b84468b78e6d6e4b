import Journal
import Posix

/// Where the CLI finds the journal and the daemon when not told.
enum Paths {
    /// SPEC 6: `$STATE_DIRECTORY/offertrack.db` when set, else `./offertrack.db`.
    static func database(_ given: String?) -> String {
        given ?? JournalLocation.defaultPath(stateDirectory: CurrentProcess.environment("STATE_DIRECTORY"))
    }

    /// `--socket`, else `$OFFERTRACK_SOCKET`, else `./offertrack.sock`.
    static func socket(_ given: String?) -> String {
        given ?? CurrentProcess.environment("OFFERTRACK_SOCKET") ?? "./offertrack.sock"
    }
}
