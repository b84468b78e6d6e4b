/// The journal as the event loop last found it, shown in `STATUS=` and acted on: records are tried while it is
/// `healthy` or `failing`; once `corrupt`, nothing more is committed or acknowledged (every record is answered
/// `storage_unavailable`) until an operator restores a backup and restarts the daemon.
enum JournalHealth: Equatable {
    /// The last commit succeeded.
    case healthy
    /// Commits fail (busy past the timeout, a full disk, an I/O error); shown until one succeeds.
    case failing(String)
    /// SQLite found the journal damaged; retrying cannot help. Nothing leaves this state.
    case corrupt(String)

    var isCorrupt: Bool {
        if case .corrupt = self { return true }
        return false
    }

    /// A commit failed: a corruption makes it `corrupt` (with the latest message), anything else `failing` unless it
    /// is corrupt already. True when the state changed from healthy or failing (which the log says once).
    mutating func failed(_ failure: JournalFailure) -> Bool {
        let wasCorrupt = isCorrupt
        let wasHealthy = self == .healthy
        if failure.isCorruption {
            self = .corrupt(failure.message)
            return !wasCorrupt
        }
        if !wasCorrupt { self = .failing(failure.message) }
        return wasHealthy
    }

    /// A commit succeeded: a failure shown ends (a corrupt journal stays corrupt). Returns the failure that ended.
    mutating func committed() -> String? {
        guard case .failing(let message) = self else { return nil }
        self = .healthy
        return message
    }

    /// What `STATUS=` says about the journal ("" while it is healthy); `detections` counts the corruptions found.
    func statusPart(detections: Int) -> String {
        switch self {
        case .healthy:
            ""
        case .failing(let message):
            "; JOURNAL FAILING: \(message)"
        case .corrupt(let message):
            "; JOURNAL CORRUPT (\(detections) detected; not acknowledging; restore from backup): \(message)"
        }
    }
}
