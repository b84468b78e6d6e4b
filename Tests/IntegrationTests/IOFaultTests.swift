import Foundation
import Posix
import TestSupport
import Testing

extension UnderAttack {
    /// I/O errors injected into the real daemon with `strace -e inject`: a failed sync is never acknowledged,
    /// a full disk is refused and recovers, failed checkpoints are counted and said, a stuck disk stops the
    /// watchdog.
    @Suite(.serialized) struct IOFaultTests {
        /// A journal that exists (its WAL does not yet: it appears when the traced daemon first commits).
        static func existingJournal(in directory: ScratchDirectory) throws -> String {
            let daemon = try DaemonProcess(in: directory)
            guard daemon.waitReady() else { throw JournalSafetyFailure("no READY=1: \(daemon.stderr)") }
            daemon.signal(Signals.terminate)
            #expect(daemon.waitExit() == 0)
            return daemon.databasePath
        }

        /// Sends `chunks` chunks of `size` records one after the other (a commit each), retrying what is refused
        /// with the same ids (up to `tries` times a chunk, 50 ms apart); returns every acknowledgement and how many
        /// were refused.
        static func stream(
            to socketPath: String, chunks: Int, size: Int = 20, prefix: String, tries: Int = 50,
            until stop: () -> Bool = { false }
        ) throws -> (seqByID: [String: Int64], refused: Int) {
            let client = try LineClient(path: socketPath)
            var seqByID: [String: Int64] = [:]
            var refused = 0
            var chunk = 0
            while chunk < chunks || (chunks == 0 && !stop()) {
                var lines = TestRecords.stream(prefix: "\(prefix)\(chunk)", count: size)
                for _ in 0..<tries where !lines.isEmpty {
                    let answers = client.exchange(lines)
                    #expect(answers.count == lines.count, "the connection ended")
                    if answers.count < lines.count { return (seqByID, refused) }
                    var again: [String] = []
                    for (line, answer) in zip(lines, answers) {
                        if answer.status == "accepted" || answer.status == "duplicate" {
                            if let id = answer.id, let seq = answer.seq { seqByID[id] = seq }
                        } else {
                            #expect(answer.code == "storage_unavailable", "\(answer)")
                            refused += 1
                            again.append(line)
                        }
                    }
                    lines = again
                    if !lines.isEmpty { usleep(50_000) }
                }
                #expect(lines.isEmpty, "still refused after \(tries) tries")
                chunk += 1
            }
            return (seqByID, refused)
        }

        /// After the daemon stopped: every acknowledged record is journaled with its seq, and the file is sound.
        static func expectJournaled(_ acknowledged: [String: Int64], in path: String) throws {
            let inspector = try JournalInspector(path: path)
            #expect(try inspector.integrityCheck() == "ok")
            let journal = try inspector.seqByID()
            let lost = acknowledged.filter { journal[$0.key] != $0.value }.map(\.key)
            #expect(lost.isEmpty, "acknowledged but lost: \(lost.prefix(5))")
        }

        @Test func eioOnTheWALsSyncIsNeverAcknowledgedAndTheServiceResumes() throws {
            let directory = ScratchDirectory()
            let path = try Self.existingJournal(in: directory)
            let traced = try TracedDaemon(
                in: directory, trace: "fdatasync,fsync", inject: "fdatasync:error=EIO:when=20..22", path: path + "-wal")
            guard traced.daemon.waitReady() else { return }
            let (acknowledged, refused) = try Self.stream(
                to: traced.daemon.socketPath, chunks: 60, prefix: "eio")
            print("EIO on fdatasync: \(acknowledged.count) acknowledged, \(refused) refused and retried")
            #expect(refused > 0, "no sync failed: the injection missed")
            #expect(acknowledged.count == 60 * 20)
            let log = traced.daemon.stderr
            #expect(log.contains("cannot commit") && log.contains("commits again"), "\(log)")
            #expect(traced.stop() == 0)
            try Self.expectJournaled(acknowledged, in: path)
        }

        @Test func enospcOnWALWritesIsRefusedUntilThereIsRoomAgain() throws {
            let directory = ScratchDirectory()
            let path = try Self.existingJournal(in: directory)
            let traced = try TracedDaemon(
                in: directory, trace: "pwrite64,write", inject: "pwrite64:error=ENOSPC:when=60..90",
                path: path + "-wal")
            guard traced.daemon.waitReady() else { return }
            // strace counts a syscall's calls per thread, and the writer's serial queue runs on whichever of the
            // daemon's Dispatch threads is free: each thread that writes the WAL fails its own 31 calls, so the
            // writes fail for a number of commits that depends on how many threads took turns (62 seen).
            let (acknowledged, refused) = try Self.stream(
                to: traced.daemon.socketPath, chunks: 60, prefix: "full", tries: 400)
            print("ENOSPC on WAL writes: \(acknowledged.count) acknowledged, \(refused) refused and retried")
            #expect(refused > 0, "no write failed: the injection missed")
            #expect(acknowledged.count == 60 * 20)
            #expect(traced.daemon.notify.messages.contains { $0.contains("JOURNAL FAILING") })
            #expect(traced.stop() == 0)
            try Self.expectJournaled(acknowledged, in: path)
        }

        /// The main database file only: commits (to the WAL) go on, checkpoints fail, are counted, said and
        /// retried with a growing pause, and succeed once the disk has room. The pauses are read from strace's
        /// times of the writes to the main file: a checkpoint's first write fails (the first two), the third
        /// checkpoint's writes succeed.
        @Test func enospcOnTheMainDatabaseDuringCheckpointsIsCountedSaidAndBackedOff() throws {
            let directory = ScratchDirectory()
            let path = try Self.existingJournal(in: directory)
            let trace = directory.file("strace.out")
            let traced = try TracedDaemon(
                in: directory, trace: "pwrite64,write", inject: "pwrite64:error=ENOSPC:when=1..2", path: path,
                output: trace)
            guard traced.daemon.waitReady() else { return }
            let started = Date()
            let (acknowledged, refused) = try Self.stream(
                to: traced.daemon.socketPath, chunks: 0, prefix: "ckpt",
                until: {
                    traced.daemon.stderr.contains("checkpoints succeed again")
                        || Date().timeIntervalSince(started) > 60
                })
            let log = traced.daemon.stderr
            let failures = log.components(separatedBy: "checkpoint failed").count - 1
            print("ENOSPC on checkpoints: \(failures) failed, \(acknowledged.count) acknowledged meanwhile")
            #expect(refused == 0, "a failing checkpoint refused records")
            #expect(failures == 2, "\(log)")
            #expect(log.contains("checkpoints succeed again"), "\(log)")
            #expect(
                traced.daemon.notify.messages.contains { $0.contains("STATUS=") && $0.contains("CHECKPOINT FAILING") },
                "STATUS= never said the checkpoints fail")
            #expect(traced.stop() == 0)
            try Self.expectJournaled(acknowledged, in: path)
            // Backed off: the second checkpoint came at least 1 s after the first failed, the third at least 2 s
            // after the second (the daemon's pauses, 1 s doubling; retrying at once would take a batch or two).
            let writes = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").filter {
                $0.contains("pwrite64(")
            }
            // Each line: [pid] seconds.microseconds pwrite64(…
            let times = writes.compactMap { line in
                line.split(separator: " ").lazy.compactMap { $0.contains(".") ? Double($0) : nil }.first
            }
            try #require(times.count >= 3 && writes.prefix(2).allSatisfy { $0.contains("INJECTED") }, "\(writes)")
            print("checkpoint pauses: \(times[1] - times[0]) s, then \(times[2] - times[1]) s")
            #expect(times[1] - times[0] >= 1, "the second checkpoint came \(times[1] - times[0]) s after the first")
            #expect(times[2] - times[1] >= 2, "the third checkpoint came \(times[2] - times[1]) s after the second")
        }

        /// A main database that takes 20 ms for every write, so that each checkpoint runs for seconds, with the WAL
        /// past its limit (64 frames here): the writer waits for a blocking checkpoint (at most 250 ms) once, not
        /// again after every commit while that checkpoint still runs. Measured as commits one after another, each
        /// timed from its send to its last answer: most must not carry the 250 ms wait.
        @Test func aSlowCheckpointPastTheWALLimitHoldsTheWriterOnceNotAfterEveryCommit() throws {
            let directory = ScratchDirectory()
            let path = try Self.existingJournal(in: directory)
            let traced = try TracedDaemon(
                in: directory, trace: "pwrite64", inject: "pwrite64:delay_enter=20000", path: path,
                environment: ["OFFERTRACK_WAL_LIMIT_FRAMES": "64"])
            guard traced.daemon.waitReady() else { return }
            let client = try LineClient(path: traced.daemon.socketPath)
            let limitBytes = Int64(64 * (4096 + 24))
            var chunk = 0
            func commit() -> Double {
                let lines = TestRecords.stream(prefix: "slow-ckpt-\(chunk)", count: 20)
                chunk += 1
                let started = Date()
                let answers = client.exchange(lines)
                #expect(answers.filter { $0.status == "accepted" }.count == lines.count, "\(answers)")
                return Date().timeIntervalSince(started)
            }
            // Past the limit: the passive checkpoints cannot keep up with a disk this slow.
            while (CurrentProcess.fileSize(path + "-wal") ?? 0) <= 2 * limitBytes, chunk < 2_000 { _ = commit() }
            try #require(chunk < 2_000, "the WAL never passed its limit")
            let times = (0..<40).map { _ in commit() }
            let waited = times.filter { $0 >= 0.24 }.count
            print(
                "a slow checkpoint past the WAL limit: \(waited) of \(times.count) commits took 240 ms or more "
                    + "(median \(times.sorted()[times.count / 2]) s); WAL \(CurrentProcess.fileSize(path + "-wal") ?? 0) bytes"
            )
            #expect(waited * 4 < times.count, "the writer waited for the checkpoint again and again: \(times)")
            #expect(traced.stop() == 0)
        }

        /// A disk that takes 3 s for one sync: WATCHDOG=1 stops while the writer is stuck, and comes back.
        @Test func aStuckDiskStopsTheWatchdogUntilTheWriterMovesAgain() throws {
            let directory = ScratchDirectory()
            let path = try Self.existingJournal(in: directory)
            let traced = try TracedDaemon(
                in: directory, trace: "fdatasync,fsync", inject: "fdatasync:delay_enter=3000000:when=30",
                path: path + "-wal", environment: ["WATCHDOG_USEC": "1000000"])
            guard traced.daemon.waitReady() else { return }
            let started = Date()
            let (acknowledged, refused) = try Self.stream(
                to: traced.daemon.socketPath, chunks: 0, prefix: "slow",
                until: { Date().timeIntervalSince(started) > 7 })
            usleep(1_500_000)
            let pings = traced.daemon.notify.arrivals(of: "WATCHDOG=1")
            let gaps = zip(pings.dropFirst(), pings).map { $0 - $1 }
            try #require(gaps.count >= 3, "\(pings.count) WATCHDOG=1 in 8.5 s: the watchdog is not fed")
            let longest = gaps.max() ?? 0
            let typical = gaps.sorted()[gaps.count / 2]
            let afterLongest = gaps.firstIndex(of: longest).map { gaps.count - $0 - 1 } ?? 0
            print(
                "stuck disk: \(pings.count) pings, typical gap \(typical) s, longest \(longest) s, "
                    + "\(afterLongest) after it; \(acknowledged.count) acknowledged")
            #expect(refused == 0)
            #expect(longest >= 2.0 && longest > 4 * typical, "the watchdog was fed while the writer was stuck")
            #expect(afterLongest >= 2, "the watchdog did not resume")
            #expect(traced.stop() == 0)
            try Self.expectJournaled(acknowledged, in: path)
        }
    }
}
