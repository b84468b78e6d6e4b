import Foundation
import Posix
import Simulator
import Synchronization
import TestSupport
import Testing

/// `kill -9` while several clients stream: every acknowledged record survives exactly once.
@Suite struct CrashSafetyTests {
    /// What the clients were told, across all cycles.
    final class Acknowledgements: Sendable {
        let seqByID = Mutex<[String: Int64]>([:])
        let mismatches = Mutex<[String]>([])

        func record(_ answers: [Answer]) {
            seqByID.withLock { known in
                for answer in answers where answer.status == "accepted" || answer.status == "duplicate" {
                    guard let id = answer.id, let seq = answer.seq else { continue }
                    if let previous = known[id], previous != seq {
                        mismatches.withLock { $0.append("\(id): seq \(previous) then \(seq)") }
                    }
                    known[id] = seq
                }
            }
        }
    }

    @Test func everyAcknowledgedRecordSurvivesRepeatedKill9ExactlyOnce() throws {
        let directory = ScratchDirectory()
        let notify = try NotifyListener(in: directory)
        let acknowledgements = Acknowledgements()
        let clients = 4
        let cycles = 20
        var nextIndex = Array(repeating: 0, count: clients)
        // When each kill comes: seeded, and the seed in every failure, so that a failing run can be replayed.
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        for cycle in 0..<cycles {
            notify.reset()
            let daemon = try DaemonProcess(in: directory, notify: notify)
            guard daemon.waitReady() else { return }
            let socketPath = daemon.socketPath
            let done = Atomic<Int>(0)
            let firstIndexes = nextIndex
            for client in 0..<clients {
                let start = firstIndexes[client]
                Thread {
                    defer { done.add(1, ordering: .sequentiallyConsistent) }
                    guard let connection = try? LineClient(path: socketPath, receiveTimeoutSeconds: 5) else { return }
                    // Each window resends from where this client's last cycle was cut off: the same ids.
                    var index = max(0, start - 200)
                    while index < start + 100_000 {
                        let lines = (index..<index + 200).map {
                            TestRecords.capabilities(id: "c\(client)-\($0)", user: "u-\($0 % 50)")
                        }
                        let answers = connection.exchange(lines)
                        acknowledgements.record(answers)
                        if answers.count < lines.count { return }
                        index += 200
                    }
                }.start()
                nextIndex[client] = start + 0
            }
            usleep(UInt32.random(in: 150_000...400_000, using: &random))
            daemon.kill()
            while done.load(ordering: .sequentiallyConsistent) < clients { usleep(5000) }
            // The next cycle resumes after the highest acknowledged index of each client.
            let known = acknowledgements.seqByID.withLock { $0 }
            for client in 0..<clients {
                let acked = known.keys.filter { $0.hasPrefix("c\(client)-") }.compactMap {
                    Int($0.split(separator: "-")[1])
                }
                nextIndex[client] = (acked.max() ?? -1) + 1
            }
            _ = cycle
        }
        // Restart once more and check the journal.
        let daemon = try DaemonProcess(in: directory, notify: notify)
        daemon.waitReady()
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
        let inspector = try JournalInspector(path: daemon.databasePath)
        #expect(try inspector.integrityCheck() == "ok")
        let journal = try inspector.seqByID()
        let acknowledged = acknowledgements.seqByID.withLock { $0 }
        #expect(acknowledged.count > 1000, "too little traffic to prove anything: \(acknowledged.count) (seed \(seed))")
        var lost: [String] = []
        for (id, seq) in acknowledged where journal[id] != seq { lost.append(id) }
        #expect(lost.isEmpty, "acknowledged but not journaled with that seq: \(lost.prefix(10)) (seed \(seed))")
        #expect(acknowledgements.mismatches.withLock { $0 }.isEmpty, "one id, two seqs (seed \(seed))")
        // Exactly once: ids are unique in the journal and the row count equals the distinct ids.
        #expect(try inspector.count() == Int64(journal.count), "seed \(seed)")
    }
}
