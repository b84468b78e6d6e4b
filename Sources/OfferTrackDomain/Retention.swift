/// Retention (SPEC section 12): which days `seal` may seal, and the acceptance horizon that follows from the last
/// sealed day. Days are UTC day numbers (milliseconds since the epoch / 86,400,000, floored).
public struct Retention: Sendable, Equatable {
    /// R: days older than this many days before `--as-of` are sealed.
    public let retentionDays: Int64
    /// W and F, which fix how far a window can read back from a record.
    public let windowMs: Int64
    public let freshnessMs: Int64

    /// The largest `retentionDays` a rules file may give (SPEC 5).
    public static let maximumDays: Int64 = 36_500

    public init(retentionDays: Int64, windowMs: Int64, freshnessMs: Int64) {
        self.retentionDays = retentionDays
        self.windowMs = windowMs
        self.freshnessMs = freshnessMs
    }

    /// K = ceil((W + F) / 24 h): how many days a window can read back.
    public static func windowDays(windowMs: Int64, freshnessMs: Int64) -> Int64 {
        let span = windowMs + freshnessMs
        let day = Timestamp.millisecondsPerDay
        return (span + day - 1) / day
    }

    /// The smallest `retentionDays` a rules file with these windows may give: K + 2 (SPEC 5).
    public static func minimumDays(windowMs: Int64, freshnessMs: Int64) -> Int64 {
        windowDays(windowMs: windowMs, freshnessMs: freshnessMs) + 2
    }

    /// K for these windows.
    public var windowDays: Int64 { Self.windowDays(windowMs: windowMs, freshnessMs: freshnessMs) }

    /// The last day `seal` may seal at `asOf`: every day d < date(asOf) − R.
    public func lastSealableDay(asOf: Int64) -> Int64 {
        Timestamp.dayNumber(asOf) - retentionDays - 1
    }

    /// The acceptance horizon once `lastSealedDay` is sealed: 00:00Z of day S + 1 + K.
    public func horizon(lastSealedDay: Int64) -> Int64 {
        Self.horizon(lastSealedDay: lastSealedDay, windowMs: windowMs, freshnessMs: freshnessMs)
    }

    /// The acceptance horizon for a last sealed day and the windows it was sealed with.
    public static func horizon(lastSealedDay: Int64, windowMs: Int64, freshnessMs: Int64) -> Int64 {
        (lastSealedDay + 1 + windowDays(windowMs: windowMs, freshnessMs: freshnessMs)) * Timestamp.millisecondsPerDay
    }
}

extension CommissionRules {
    /// The file's retention (SPEC 12), nil when it keeps raw records forever.
    public var retention: Retention? {
        retentionDays.map {
            Retention(retentionDays: $0, windowMs: settings.windowMs, freshnessMs: settings.freshnessMs)
        }
    }
}
