import AttributionJoin
import Foundation
import JournalStore
import Posix
import Synchronization
import Testing

@testable import OfferTrackDaemon

/// When a passive checkpoint starts (docs/durability-and-limits.md, "The checkpoint policy"), computed by hand:
/// every 600 new frames while the WAL is shorter than 2,048 frames, every 2,048 once it is longer (a flood), and
/// half or a quarter of a small limit.
@Suite struct CheckpointPolicyTests {
    @Test(arguments: [
        // (limit, WAL frames, new frames that start a passive checkpoint)
        (8192, 0, 600), (8192, 599, 600), (8192, 2047, 600), (8192, 2048, 2048), (8192, 8191, 2048),
        (8192, 20_000, 2048),
        (4096, 1023, 600), (4096, 1024, 1024), (4096, 3000, 1024),
        (1024, 100, 512), (1024, 900, 512),
        (64, 10, 32), (64, 63, 32),
    ])
    func passiveCheckpointsStartEvery(limit: Int, walFrames: Int, expected: Int) {
        let path = "/tmp/checkpoint-policy-\(UInt32.random(in: 0...UInt32.max)).db"
        let checkpoints = CheckpointThread(journalPath: path, limitFrames: limit, log: .discard)
        defer {
            checkpoints.close()
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        #expect(checkpoints.newFramesForPassive(walFrames: walFrames) == expected)
    }

    /// A pause is counted with its time and shown by the metrics, in all and in the pauses' histogram: with a limit
    /// of 64 frames, a commit leaving 40 frames queues a passive checkpoint, one leaving 64 pauses the writer for a
    /// blocking one.
    @Test func aPauseIsCountedAndExposed() {
        let path = "/tmp/checkpoint-policy-\(UInt32.random(in: 0...UInt32.max)).db"
        let metrics = DaemonMetrics()
        let checkpoints = CheckpointThread(
            journalPath: path, limitFrames: 64, pauseDurations: metrics.writerPauseSeconds, log: .discard)
        defer {
            checkpoints.close()
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        checkpoints.afterCommit(walFrames: 40)
        #expect(checkpoints.health.withLock { $0.writerPauses } == 0)
        checkpoints.afterCommit(walFrames: 64)
        let health = checkpoints.health.withLock { $0 }
        #expect(health.writerPauses == 1)
        let text = metrics.render(journalBytes: 0, checkpoints: health)
        #expect(text.contains("\noffertrack_checkpoint_writer_pauses_total 1\n"))
        func value(_ name: String) -> Double? {
            let prefix = name + " "
            return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap {
                Double($0.dropFirst(prefix.count))
            }
        }
        let seconds = value("offertrack_checkpoint_writer_pause_seconds_total")
        #expect(seconds.map { Int64(($0 * 1000).rounded()) } == health.writerPauseMilliseconds, "\(text)")
        // The histogram has the one pause, to the microsecond: the counter's whole milliseconds are within 1 ms of it.
        #expect(value("offertrack_writer_pause_seconds_count") == 1, "\(text)")
        let observed = value("offertrack_writer_pause_seconds_sum").map { $0 * 1000 } ?? -1
        #expect(observed >= Double(health.writerPauseMilliseconds), "\(text)")
        #expect(observed < Double(health.writerPauseMilliseconds + 1), "\(text)")
    }

    /// Erasures close together share a `TRUNCATE`: the first empties the WAL at once, two asked for right after it
    /// wait `forgetSpacingMilliseconds` from it and go together (a lower bound only: a busy machine makes it later).
    /// On a new journal whose writer is idle (each `TRUNCATE` completes at once); counted by the exposition.
    @Test func erasuresCloseTogetherShareATruncate() throws {
        let path = "/tmp/checkpoint-policy-\(UInt32.random(in: 0...UInt32.max)).db"
        let writer = try JournalWriter(
            path: path, options: .init(durability: .normal, schema: .migrate, checkpointsOnCommit: false))
        defer { withExtendedLifetime(writer) {} }
        let checkpoints = CheckpointThread(journalPath: path, limitFrames: 64, log: .discard)
        defer {
            checkpoints.close()
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        func truncates(reaching count: Int) -> Int64? {
            let deadline = Clock.monotonicMilliseconds() + 60_000
            while Clock.monotonicMilliseconds() < deadline {
                let done = checkpoints.health.withLock { $0.erasureTruncates }
                if done >= count { return Clock.monotonicMilliseconds() }
                Sleep.milliseconds(5)
            }
            return nil
        }
        let firstAsked = Clock.monotonicMilliseconds()
        checkpoints.requestForgettingOldFrames()
        #expect(truncates(reaching: 1) != nil)
        checkpoints.requestForgettingOldFrames()
        checkpoints.requestForgettingOldFrames()
        let second = try #require(truncates(reaching: 2))
        #expect(second - firstAsked >= CheckpointThread.forgetSpacingMilliseconds)
        // Had the two not gone together, a third would come a spacing after the second.
        Sleep.milliseconds(Int(CheckpointThread.forgetSpacingMilliseconds) + 1_500)
        let health = checkpoints.health.withLock { $0 }
        #expect(health.erasureTruncates == 2)
        let text = DaemonMetrics().render(journalBytes: 0, checkpoints: health)
        #expect(text.contains("\noffertrack_checkpoint_erasure_truncates_total 2\n"), "\(text)")
    }
}
