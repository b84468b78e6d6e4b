import JournalStore
import OfferTrackDomain
import Simulator

/// The simulated records every measurement uses: `WorkloadSimulator`'s realistic lines, with its deliberate
/// repeats left out so that every id is unique and every answer must be `accepted`.
struct Workload {
    /// The records, already validated (as the simulator guarantees) and with their lines.
    let submissions: [Submission]

    /// The first `count` unique records of a deterministic simulation whose users start on the day of `start`.
    init(count: Int, seed: UInt64 = 1, start: Int64 = WorkloadSimulator.defaultStart) {
        let simulator = WorkloadSimulator(users: max(1, count), seed: seed, start: start)
        var submissions: [Submission] = []
        submissions.reserveCapacity(count)
        for simulated in simulator where !simulated.isDuplicate {
            guard submissions.count < count else { break }
            submissions.append(Submission(record: simulated.record, line: Array(simulated.line.utf8)))
        }
        self.submissions = submissions
    }

    /// The first `records` records of `simulate --returning` over `users` users (time order, no repeats), whose
    /// visits span `days` days from `start`.
    init(
        returningUsers users: Int, records: Int, seed: UInt64 = 1, start: Int64 = WorkloadSimulator.defaultStart,
        days: Int = 7
    ) {
        submissions = ReturningUserSimulator(users: users, seed: seed, start: start, days: days, records: records).map {
            Submission(record: $0.record, line: Array($0.line.utf8))
        }
    }

    /// Records made elsewhere (each must be a valid record with a unique id).
    init(submissions: [Submission]) {
        self.submissions = submissions
    }

    /// The records as NDJSON, one line each, for the baselines that read a file.
    var ndjson: [UInt8] { Self.ndjson(submissions[...]) }

    /// `submissions` as NDJSON, one line each.
    static func ndjson(_ submissions: ArraySlice<Submission>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(submissions.reduce(0) { $0 + $1.line.count + 1 })
        for submission in submissions {
            bytes += submission.line
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    var count: Int { submissions.count }

    /// Average line length in bytes (without `\n`).
    var averageLineBytes: Double {
        guard !submissions.isEmpty else { return 0 }
        return Double(submissions.reduce(0) { $0 + $1.line.count }) / Double(submissions.count)
    }

    /// The records split into `parts` contiguous, nearly equal slices (one per client).
    func split(into parts: Int) -> [ArraySlice<Submission>] {
        Self.split(submissions[...], into: parts)
    }

    /// The records dealt round-robin to `parts` clients (record i to client i mod `parts`), so that every
    /// user's records travel over every connection.
    func interleaved(into parts: Int) -> [ArraySlice<Submission>] {
        let parts = max(1, parts)
        return (0..<parts).map { part in
            ArraySlice(stride(from: part, to: submissions.count, by: parts).map { submissions[$0] })
        }
    }

    /// `records` split into `parts` contiguous, nearly equal slices.
    static func split(_ records: ArraySlice<Submission>, into parts: Int) -> [ArraySlice<Submission>] {
        let parts = max(1, parts)
        let base = records.startIndex
        let count = records.count
        return (0..<parts).map { part in
            records[(base + count * part / parts)..<(base + count * (part + 1) / parts)]
        }
    }
}
