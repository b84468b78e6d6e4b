import AttributionJoin
import Foundation
import JournalStore
import Posix
import Synchronization
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
    /// central journal's WAL reached 4.7 GB beside a 4 KiB database file). Back-to-back commits leave passive
    /// checkpoints no pause to finish in, so the limit's blocking checkpoint is what holds: with a limit of 256
    /// frames (1 MiB), the WAL file never passes the limit plus the longest commit (measured in this run: the
    /// frames one commit adds), while the database grows several times bigger.
    @Test func commitsFromTheStreamCheckpointTheWAL() throws {
        let path = "/tmp/pipeline-test-\(UInt32.random(in: 0...UInt32.max)).db"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let writer = try JournalWriter(
            path: path, options: .init(durability: .normal, schema: .migrate, checkpointsOnCommit: false))
        let limit = 256
        let pipeline = try CommitPipeline(
            writer: writer, metrics: DaemonMetrics(), backlog: Backlog(), log: .discard, walLimitFrames: limit)
        var longest = 0
        var framesBefore = 0
        var longestCommit = 0
        for start in stride(from: 0, to: 40_000, by: 500) {
            let outcomes = try pipeline.stream.commit(Self.submissions(start..<start + 500))
            #expect(outcomes.count == 500)
            longest = max(longest, Self.size(path + "-wal"))
            let frames = pipeline.runOnWriter { $0.framesInWAL }
            longestCommit = max(longestCommit, frames >= framesBefore ? frames - framesBefore : frames)
            framesBefore = frames
        }
        let database = Self.size(path)
        let bound = (limit + longestCommit) * Int(CheckpointThread.frameBytes) + 32
        print(
            "after 40,000 records from the stream: longest WAL \(longest >> 10) KiB (bound \(bound >> 10) KiB, "
                + "longest commit \(longestCommit) frames), "
                + "database \(database >> 10) KiB, \(pipeline.checkpoints.health.withLock { $0.blocking }) blocking checkpoints"
        )
        #expect(database > 3 * bound, "too few records to tell a bounded WAL from an unchecked one")
        #expect(longest <= bound, "the WAL reached \(longest) bytes, past the limit and a commit (\(bound) bytes)")
    }

    static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }
}
