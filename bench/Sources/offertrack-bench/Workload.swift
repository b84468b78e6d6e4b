import Journal
import OfferTrackDomain

/// The simulated records every measurement uses: `WorkloadSimulator`'s realistic lines, with its deliberate
/// repeats left out so that every id is unique and every answer must be `accepted`.
struct Workload {
    /// The records, already validated (as the simulator guarantees) and with their lines.
    let submissions: [Submission]

    /// The first `count` unique records of a deterministic simulation.
    init(count: Int, seed: UInt64 = 1) {
        let simulator = WorkloadSimulator(users: max(1, count), seed: seed)
        var submissions: [Submission] = []
        submissions.reserveCapacity(count)
        for simulated in simulator where !simulated.isDuplicate {
            guard submissions.count < count else { break }
            submissions.append(Submission(record: simulated.record, line: Array(simulated.line.utf8)))
        }
        self.submissions = submissions
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
