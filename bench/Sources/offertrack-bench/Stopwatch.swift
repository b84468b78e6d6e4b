import Glibc

/// Monotonic time in nanoseconds, and sleeping until a moment.
enum Stopwatch {
    /// Nanoseconds of `CLOCK_MONOTONIC`.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Seconds elapsed since `start` (a value of `now()`).
    static func seconds(since start: UInt64) -> Double {
        Double(now() &- start) / 1e9
    }

    /// Sleeps until `deadline` (a value of `now()`); returns at once if it has passed.
    static func sleep(until deadline: UInt64) {
        while true {
            let current = now()
            guard current < deadline else { return }
            let remaining = deadline - current
            var request = timespec(
                tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
            _ = nanosleep(&request, nil)
        }
    }

    /// Sleeps for `seconds`.
    static func sleep(seconds: Double) {
        sleep(until: now() + UInt64(seconds * 1e9))
    }
}
