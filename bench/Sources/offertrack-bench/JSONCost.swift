import Foundation
import JournalStore
import OfferTrackDomain
import WireFormat

/// Section 3: per-record cost of parsing and validating a line, against Foundation's `JSONDecoder`.
enum JSONCost {
    /// Nanoseconds per line of `RecordValidator.validate` (parse + validate) over every line of `workload`.
    static func validatorNanoseconds(_ workload: Workload, passes: Int) throws -> Double {
        var valid = 0
        let start = Stopwatch.now()
        for _ in 0..<passes {
            for submission in workload.submissions {
                if case .valid = RecordValidator.validate(submission.line) { valid += 1 }
            }
        }
        let elapsed = Double(Stopwatch.now() - start)
        guard valid == workload.count * passes else {
            throw BenchFailure("RecordValidator refused \(workload.count * passes - valid) simulated lines")
        }
        return elapsed / Double(workload.count * passes)
    }

    /// Nanoseconds per line of a reused `JSONDecoder` decoding each line into `CodableRecord`.
    static func decoderNanoseconds(_ workload: Workload, passes: Int) throws -> Double {
        let data = workload.submissions.map { Data($0.line) }
        let decoder = JSONDecoder()
        var decoded = 0
        let start = Stopwatch.now()
        for _ in 0..<passes {
            for line in data {
                let record = try decoder.decode(CodableRecord.self, from: line)
                decoded += record.id.isEmpty ? 0 : 1
            }
        }
        let elapsed = Double(Stopwatch.now() - start)
        guard decoded == workload.count * passes else { throw BenchFailure("JSONDecoder lost records") }
        return elapsed / Double(workload.count * passes)
    }
}
