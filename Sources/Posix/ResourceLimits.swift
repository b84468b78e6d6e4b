import Glibc

/// `RLIMIT_NOFILE`, the open-file limit: read it and raise the soft limit.
public enum ResourceLimits {
    /// The current soft and hard limits on open descriptors.
    public static func openFiles() -> (soft: UInt64, hard: UInt64) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (0, 0) }
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }

    /// Raises the soft limit to `wanted`, capped at the hard limit (never lowers it); returns the soft limit now.
    @discardableResult
    public static func raiseOpenFiles(to wanted: UInt64) -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        let target = min(wanted, UInt64(limit.rlim_max))
        guard target > UInt64(limit.rlim_cur) else { return UInt64(limit.rlim_cur) }
        limit.rlim_cur = rlim_t(target)
        return setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? target : openFiles().soft
    }
}
