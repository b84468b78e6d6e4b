import JournalStore

/// What the daemon takes from its process environment rather than its flags. The executable reads the variables
/// (`main.swift`) and passes this value in; the library never reads the environment itself.
public struct DaemonEnvironment: Sendable, Equatable {
    /// The WAL's limit by default, in frames (of a 4 KiB page and a 24-byte header: 32 MiB).
    public static let defaultWALLimitFrames = 8192

    /// A service manager listens for notifications (`NOTIFY_SOCKET` is set): the start says what it does in
    /// `STATUS=` and asks for more time while it makes progress (`StartupHeartbeat`).
    public var supervised: Bool
    /// The WAL's limit in frames, past which the writer waits for a blocking checkpoint
    /// (`OFFERTRACK_WAL_LIMIT_FRAMES`; tests set a small one).
    public var walLimitFrames: Int
    /// How schema 8's migration runs (in debug builds `OFFERTRACK_TEST_MIGRATION_*`: tests kill it after a step, or
    /// make steps small).
    public var migrationTuning: UserKeysMigrationTuning
    /// How an erasure's rename is split between its batch and later chunks (in debug builds
    /// `OFFERTRACK_TEST_RENAME_*`: tests make chunks small, or kill the daemon after one).
    public var renameTuning: RenameTuning

    public init(
        supervised: Bool = false, walLimitFrames: Int = defaultWALLimitFrames,
        migrationTuning: UserKeysMigrationTuning = .init(), renameTuning: RenameTuning = .daemon
    ) {
        self.renameTuning = renameTuning
        self.supervised = supervised
        self.walLimitFrames = walLimitFrames
        self.migrationTuning = migrationTuning
    }
}
