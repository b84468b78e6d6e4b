import Foundation
import Journal
import Testing
import WireFormat

@testable import OfferTrackDaemon

/// The writer thread with a real journal: what a central daemon's commits (records from the stream) get.
@Suite struct CommitPipelineTests {
    static func submissions(_ range: Range<Int>) -> [Submission] {
        range.compactMap { index in
            let line = Array(
                #"{"type":"capabilities","id":"s-\#(index)","ts":"2026-11-28T10:00:00Z","user":"u-\#(index % 977)","authorization":3,"capabilities":2}"#
                    .utf8)
            guard case .valid(let record) = RecordValidator.validate(line) else { return nil }
            return Submission(record: record, line: line)
        }
    }

    /// Commits from the stream keep the WAL short, as the socket's batches do (they once never checkpointed: a
    /// central journal's WAL reached 4.7 GB beside a 4 KiB database file).
    @Test func commitsFromTheStreamCheckpointTheWAL() throws {
        let path = "/tmp/pipeline-test-\(UInt32.random(in: 0...UInt32.max)).db"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let writer = try JournalWriter(
            path: path, durability: .normal, schema: .migrate, checkpointsOnCommit: false)
        let pipeline = try CommitPipeline(writer: writer, metrics: DaemonMetrics(), backlog: Backlog())
        for start in stride(from: 0, to: 30_000, by: 500) {
            let outcomes = try pipeline.commitFromStream(Self.submissions(start..<start + 500))
            #expect(outcomes.count == 500)
        }
        let wal = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
        let database = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        print("after 30,000 records from the stream: WAL \(wal >> 10) KiB, database \(database >> 10) KiB")
        #expect(wal < database, "the WAL (\(wal) bytes) outgrew the database (\(database) bytes)")
    }
}
