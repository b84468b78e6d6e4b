import OfferTrackDomain

/// Notices a user who sends more records in a UTC day than a person would: a placeholder for signed-out people
/// that `sharedUsers` (SPEC rule 4.0) does not list yet, a test device replaying offers. Counts live in a
/// count-min sketch (4 × 65,536 counters, 1 MiB, whatever the number of users), reset at each UTC midnight; it
/// over-counts a user by at most about 1/16,000 of the day's records (with probability 1 − e⁻⁴), never under-counts.
/// A user passing `threshold` is named once a day, and at most one such line is written a minute.
struct HotUserWatch {
    /// Records of one user in one UTC day past which the log names them.
    static let defaultThreshold: UInt32 = 10_000
    private static let width = 65_536
    private static let depth = 4

    let threshold: UInt32
    private var counters: [UInt32]
    private var day: Int64 = .min
    /// Users named today (at most 64 remembered; past that, a user may be named again).
    private var named: Set<ExactString> = []
    private var lastLineAt: Int64?

    init(threshold: UInt32 = defaultThreshold) {
        self.threshold = threshold
        counters = [UInt32](repeating: 0, count: Self.width * Self.depth)
    }

    /// Counts `records` of `user` journaled at `now` (wall-clock epoch ms); returns the log line when the user
    /// passes the threshold today (unless `shared`, or a line was written less than a minute ago).
    mutating func note(user: String, records: Int, shared: Bool, now: Int64) -> String? {
        let today = now >= 0 ? now / Timestamp.millisecondsPerDay : -1
        if today != day {
            day = today
            for index in counters.indices { counters[index] = 0 }
            named = []
        }
        var hash = ByteHash.hash(user)
        var estimate = UInt32.max
        for row in 0..<Self.depth {
            let index = row * Self.width + Int(truncatingIfNeeded: hash & UInt64(Self.width - 1))
            let (sum, overflow) = counters[index].addingReportingOverflow(UInt32(clamping: records))
            counters[index] = overflow ? .max : sum
            estimate = min(estimate, counters[index])
            hash = ByteHash.mix(hash)
        }
        guard estimate > threshold, !shared, lastLineAt.map({ now - $0 >= 60_000 }) ?? true else { return nil }
        if named.count >= 64 { named.removeAll() }
        guard named.insert(ExactString(user)).inserted else { return nil }
        lastLineAt = now
        return "user \(JSONStringLiteral.quote(user)) sent about \(estimate) records today, more than "
            + "\(threshold): if it is a placeholder for signed-out people, add it to sharedUsers in the rules file and "
            + "reload (systemctl reload offertrackd) so that it is never attributed (SPEC rule 4.0); if it is a test "
            + "device, keep its traffic away from production. offertrack status lists today's busiest users"
    }
}
