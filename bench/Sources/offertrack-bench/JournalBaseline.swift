import AttributionJoin
import Foundation
import JournalStore
import OfferTrackDomain
import SQLite

/// Section 1: the journal's physical limit, in process, without the daemon.
enum JournalBaseline {
    /// Rows/s of `JournalWriter.append` with the production schema and durability, in batches of `batch`.
    /// `join` keeps attribution's derived tables current in the same transactions, as the daemon does.
    static func writerRowsPerSecond(
        _ workload: Workload, batch: Int, durability: Durability, path: String, join: Bool = true
    ) throws -> Double {
        let writer = try JournalWriter(
            path: path, options: .init(durability: durability, schema: .migrate, maintainsDerivedTables: join))
        let receivedAt = Int64(Date().timeIntervalSince1970 * 1000)
        let start = Stopwatch.now()
        var index = 0
        while index < workload.count {
            let end = min(index + batch, workload.count)
            let outcomes = try writer.append(Array(workload.submissions[index..<end]), receivedAt: receivedAt)
            guard outcomes.allSatisfy({ if case .accepted = $0 { true } else { false } }) else {
                throw BenchFailure("the baseline journal answered something other than accepted")
            }
            index = end
        }
        return Double(workload.count) / Stopwatch.seconds(since: start)
    }

    /// Rows/s of a plain `INSERT (line)` into a table with no other columns or indexes, same WAL and
    /// `synchronous` setting, batches of `batch`: what the schema and the wrapper's per-row work cost on top.
    static func rawRowsPerSecond(
        _ workload: Workload, batch: Int, durability: Durability, path: String
    ) throws -> Double {
        let connection = try Connection(path: path, mode: .readWriteCreate)
        _ = try connection.scalarText("PRAGMA journal_mode=WAL")
        try connection.execute("PRAGMA synchronous=\(durability == .full ? "FULL" : "NORMAL")")
        try connection.execute("CREATE TABLE raw (seq INTEGER PRIMARY KEY, line TEXT NOT NULL)")
        let start = Stopwatch.now()
        var index = 0
        while index < workload.count {
            let end = min(index + batch, workload.count)
            try connection.transaction {
                let insert = try connection.prepare("INSERT INTO raw (line) VALUES (?1)")
                for submission in workload.submissions[index..<end] {
                    try insert.bindText(submission.line, at: 1)
                    try insert.run()
                }
            }
            index = end
        }
        return Double(workload.count) / Stopwatch.seconds(since: start)
    }
}
