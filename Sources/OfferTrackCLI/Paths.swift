import JournalSealing
import JournalStore
import PublishedLedger

/// What `offertrack` takes from its process environment: read by the executable (`Sources/offertrack/main.swift`)
/// and passed to every command, so that no library reads the environment (issue #33).
public struct CommandEnvironment: Sendable {
    /// `$STATE_DIRECTORY`: where the journal is when `--db` is not given (SPEC 6).
    public var stateDirectory: String?
    /// `$OFFERTRACK_SOCKET`: the daemon's socket when `--socket` is not given.
    public var socket: String?
    /// The tests' hooks in an export's staging (in debug builds `OFFERTRACK_TEST_EXPORT_*`; none in a release build).
    public var exportHooks: ExportStagingHooks
    /// How `rebuild` runs schema 8's migration (in debug builds `OFFERTRACK_TEST_MIGRATION_*`; else the default).
    public var migrationTuning: UserKeysMigrationTuning
    /// The tests' hooks in a seal (in debug builds `OFFERTRACK_TEST_SEAL_*`; none in a release build).
    public var sealHooks = SealHooks()

    /// The values given (none set by default).
    public init(
        stateDirectory: String? = nil, socket: String? = nil, exportHooks: ExportStagingHooks = .init(),
        migrationTuning: UserKeysMigrationTuning = .init()
    ) {
        self.stateDirectory = stateDirectory
        self.socket = socket
        self.exportHooks = exportHooks
        self.migrationTuning = migrationTuning
    }

    /// The values from `variable` (the executable's environment): `STATE_DIRECTORY`, `OFFERTRACK_SOCKET` and, in
    /// debug builds only (`OFFERTRACK_FAULT_HOOKS`), the hooks' and tuning's variables.
    public init(_ variable: (String) -> String?) {
        self.init(stateDirectory: variable("STATE_DIRECTORY"), socket: variable("OFFERTRACK_SOCKET"))
        #if OFFERTRACK_FAULT_HOOKS
            exportHooks = ExportStagingHooks(variable)
            migrationTuning = UserKeysMigrationTuning(variable)
            sealHooks = SealHooks(variable)
        #endif
    }
}

/// Where the CLI finds the journal and the daemon when not told.
enum Paths {
    /// SPEC 6: `$STATE_DIRECTORY/offertrack.db` when set, else `./offertrack.db`.
    static func database(_ given: String?, _ environment: CommandEnvironment) -> String {
        given ?? JournalLocation.defaultPath(stateDirectory: environment.stateDirectory)
    }

    /// `--socket`, else `$OFFERTRACK_SOCKET`, else `./offertrack.sock`.
    static func socket(_ given: String?, _ environment: CommandEnvironment) -> String {
        given ?? environment.socket ?? "./offertrack.sock"
    }
}
