import OfferTrackDomain

/// A steady flow of users over many days (sealing's traffic, SPEC 12: a journal that plateaus): every
/// `cohortDays` days a cohort of `usersPerCohort` new users arrives over those days, and each comes back two to
/// five times over the next `4 × cohortDays` days, as `ReturningUserSimulator`'s users do (each cohort is that
/// simulator with a seed of its own). However many days it runs, every day has about as many new and returning
/// users as the one before. Deterministic: identical arguments give identical records.
public struct SteadyFlowSimulator: Sendable {
    public let usersPerCohort: Int
    public let cohortDays: Int
    public let days: Int
    public let seed: UInt64
    public let start: Int64

    public init(
        usersPerCohort: Int, cohortDays: Int = 4, days: Int, seed: UInt64 = 1,
        start: Int64 = WorkloadSimulator.defaultStart
    ) {
        self.usersPerCohort = Swift.max(0, usersPerCohort)
        self.cohortDays = Swift.max(1, cohortDays)
        self.days = Swift.max(1, days)
        self.seed = seed
        self.start = start
    }

    /// Each simulated day's records (day 0 from `start`), in time order; records after the last day are left out.
    public func recordsByDay() -> [[SimulatedRecord]] {
        var byDay: [[SimulatedRecord]] = Array(repeating: [], count: days)
        let dayMs = Timestamp.millisecondsPerDay
        // Cohorts from before day 0 too, so that the first days already have returning users.
        var cohortStart = -4 * cohortDays
        while cohortStart < days {
            let cohort = ReturningUserSimulator(
                users: usersPerCohort, seed: seed &+ UInt64(bitPattern: Int64(cohortStart + 1_000_000)),
                start: start + Int64(cohortStart) * dayMs, days: 4 * cohortDays)
            for record in cohort {
                let day = Int((record.record.ts - start).floorDivided(by: dayMs))
                if day >= 0 && day < days { byDay[day].append(record) }
            }
            cohortStart += cohortDays
        }
        for day in byDay.indices { byDay[day].sort { RecordOrder.precedes($0.record, $1.record) } }
        return byDay
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
