/// How hard a commit is pushed to disk before it is acknowledged.
public enum Durability: String, Sendable, CaseIterable {
    /// `synchronous=FULL`: the WAL is synced on every commit; an acknowledged record survives a power cut.
    case full
    /// `synchronous=NORMAL`: survives a crash of the daemon; a power cut may lose the last commits.
    case normal
    #if OFFERTRACK_FAULT_HOOKS
        /// `synchronous=OFF`, in debug builds only: never synced, so a power cut loses acknowledged records. It
        /// exists so that the power-loss test can show it catches a daemon that does not sync; the daemon takes it
        /// only from `OFFERTRACKD_TEST_ONLY_SYNCHRONOUS_OFF=1`, never from a flag.
        case unsafeOffForTests = "unsafe-off-for-tests"
    #endif

    /// What an operator may choose (`offertrackd --durability`).
    public static let operatorChoices: [Durability] = [.full, .normal]

    /// The `PRAGMA synchronous` value.
    package var pragmaValue: String {
        switch self {
        case .full: "FULL"
        case .normal: "NORMAL"
        #if OFFERTRACK_FAULT_HOOKS
            case .unsafeOffForTests: "OFF"
        #endif
        }
    }
}
