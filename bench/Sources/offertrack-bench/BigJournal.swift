import AttributionJoin
import JournalStore
import OfferTrackDomain
import Simulator

/// Builds a large journal quickly, in process, through `JournalWriter` (durability normal, big batches).
enum BigJournal {
    static let defaultStart = WorkloadSimulator.defaultStart

    /// Every unique record `users` simulated users make over `days`, appended to a new journal at `path`.
    static func build(path: String, users: Int, days: Int) throws -> (count: Int, seconds: Double) {
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        let start = Stopwatch.now()
        var batch: [Submission] = []
        var written = 0
        for simulated in WorkloadSimulator(users: users, seed: 43, days: days) where !simulated.isDuplicate {
            batch.append(Submission(record: simulated.record, line: Array(simulated.line.utf8)))
            if batch.count == 8192 {
                _ = try writer.append(batch, receivedAt: 0)
                written += batch.count
                batch.removeAll(keepingCapacity: true)
            }
        }
        _ = try writer.append(batch, receivedAt: 0)
        return (written + batch.count, Stopwatch.seconds(since: start))
    }

    /// Appends `count` unique simulated records to a new journal at `path`, joined under
    /// `QueryCost.holdingRules`; returns the seconds it took.
    static func build(path: String, count: Int, progress: (Int) -> Void) throws -> Double {
        let writer = try JournalWriter(
            path: path, durability: .normal, schema: .migrate, settings: QueryCost.holdingSettings)
        // Spread over 30 days like a month of production traffic.
        let simulator = WorkloadSimulator(users: count, seed: 42, days: 30)
        let start = Stopwatch.now()
        var batch: [Submission] = []
        batch.reserveCapacity(8192)
        var written = 0
        for simulated in simulator where !simulated.isDuplicate {
            guard written + batch.count < count else { break }
            batch.append(Submission(record: simulated.record, line: Array(simulated.line.utf8)))
            if batch.count == 8192 {
                _ = try writer.append(batch, receivedAt: simulated.record.ts)
                written += batch.count
                batch.removeAll(keepingCapacity: true)
                if written % 1_007_616 == 0 { progress(written) }
            }
        }
        if !batch.isEmpty {
            _ = try writer.append(batch, receivedAt: 0)
            written += batch.count
        }
        guard written == count else { throw BenchFailure("the simulator gave \(written) of \(count) records") }
        return Stopwatch.seconds(since: start)
    }
}
