import Glibc

/// Wall and monotonic clocks.
public enum Clock {
    /// Microseconds of `CLOCK_MONOTONIC` (what systemd's `MONOTONIC_USEC` expects).
    public static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }

    /// Milliseconds of `CLOCK_MONOTONIC`.
    public static func monotonicMilliseconds() -> Int64 { Int64(monotonicMicroseconds() / 1000) }

    /// UTC milliseconds since the Unix epoch.
    public static func wallMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
