import Foundation
import OfferTrackDomain
import Posix
import Simulator
import Synchronization
import TestSupport
import Testing

/// Power cuts, not just `kill -9` (which keeps the page cache and so passes even without syncing): the
/// journal lives on `powercut-fs`, which on a cut throws away everything written since the last sync.
@Suite(.serialized) struct PowerLossTests {
    /// What the clients were told and what the journal held after the last restart.
    struct Outcome {
        let cycles: Int
        let acknowledged: [String: Int64]
        let lost: [String]
        let mismatches: [String]
        let integrity: String?
        let journaledRows: Int64
        let distinctIDs: Int
    }

    /// `cycles` times: start the daemon on the power-cut filesystem, stream from 4 clients, cut the power at a
    /// random moment (the daemon is killed while its pending writes and syncs hang), bring it back with only
    /// the synced bytes. Then restart once more and compare the journal with every acknowledgement.
    static func run(cycles: Int, environment: [String: String] = [:], seed: UInt64) throws -> Outcome {
        print("power-loss seed \(seed) (replay: set it in the test)")
        var random = SeededGenerator(seed: seed)
        let directory = ScratchDirectory()
        let disk = try PowerCutFilesystem(in: directory)
        let databasePath = "\(disk.path)/offertrack.db"
        let notify = try NotifyListener(in: directory)
        let acknowledged = Mutex<[String: Int64]>([:])
        let mismatches = Mutex<[String]>([])
        let clients = 4
        var nextIndex = Array(repeating: 0, count: clients)
        for _ in 0..<cycles {
            notify.reset()
            let daemon = try DaemonProcess(
                in: directory, environment: environment, notify: notify, databasePath: databasePath)
            guard daemon.waitReady() else { throw PowerCutFailure("no READY=1: \(daemon.stderr)") }
            let socketPath = daemon.socketPath
            let done = Atomic<Int>(0)
            for client in 0..<clients {
                let start = nextIndex[client]
                Thread {
                    defer { done.add(1, ordering: .sequentiallyConsistent) }
                    guard let connection = try? LineClient(path: socketPath, receiveTimeoutSeconds: 20) else { return }
                    // Each cycle resends the last window before where this client was cut off: the same ids.
                    var index = max(0, start - 100)
                    while true {
                        let lines = (index..<index + 100).map {
                            TestRecords.capabilities(id: "p\(client)-\($0)", user: "u-\($0 % 40)")
                        }
                        let answers = connection.exchange(lines)
                        acknowledged.withLock { known in
                            for answer in answers where answer.status == "accepted" || answer.status == "duplicate" {
                                guard let id = answer.id, let seq = answer.seq else { continue }
                                if let previous = known[id], previous != seq {
                                    mismatches.withLock { $0.append("\(id): seq \(previous) then \(seq)") }
                                }
                                known[id] = seq
                            }
                        }
                        if answers.count < lines.count { return }
                        index += 100
                    }
                }.start()
            }
            usleep(UInt32.random(in: 100_000...500_000, using: &random))
            try disk.cut()
            daemon.signal(Signals.kill)
            usleep(100_000)
            try disk.restore()
            #expect(daemon.waitExit(timeout: 20) != nil, "the daemon did not die after the power cut")
            while done.load(ordering: .sequentiallyConsistent) < clients { usleep(5000) }
            let known = acknowledged.withLock { $0 }
            for client in 0..<clients {
                let indexes = known.keys.filter { $0.hasPrefix("p\(client)-") }.compactMap {
                    Int($0.split(separator: "-")[1])
                }
                nextIndex[client] = (indexes.max() ?? -1) + 1
            }
        }
        notify.reset()
        let daemon = try DaemonProcess(
            in: directory, environment: environment, notify: notify, databasePath: databasePath)
        guard daemon.waitReady() else { throw PowerCutFailure("no READY=1 after the last cut: \(daemon.stderr)") }
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
        let inspector = try JournalInspector(path: databasePath)
        let journal = try inspector.seqByID()
        let told = acknowledged.withLock { $0 }
        let lost = told.filter { journal[$0.key] != $0.value }.map(\.key).sorted()
        return Outcome(
            cycles: cycles, acknowledged: told, lost: lost, mismatches: mismatches.withLock { $0 },
            integrity: try inspector.integrityCheck(), journaledRows: try inspector.count(),
            distinctIDs: journal.count)
    }

    @Test func everyAcknowledgedRecordSurvivesRandomPowerCutsOnceWithItsSeq() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        let outcome = try Self.run(cycles: 24, seed: seed)
        print(
            "power loss: \(outcome.cycles) cuts survived, \(outcome.acknowledged.count) records acknowledged, "
                + "\(outcome.lost.count) lost, \(outcome.journaledRows) journaled (seed \(seed))")
        #expect(outcome.acknowledged.count > 1000, "too little traffic to prove anything (seed \(seed))")
        #expect(outcome.lost.isEmpty, "acknowledged but lost (seed \(seed)): \(outcome.lost.prefix(10))")
        #expect(outcome.mismatches.isEmpty, "one id, two seqs (seed \(seed)): \(outcome.mismatches.prefix(5))")
        #expect(outcome.integrity == "ok")
        #expect(outcome.journaledRows == Int64(outcome.distinctIDs))
    }

    /// The control: the same test against a daemon that never syncs (synchronous=OFF, a test-only switch)
    /// must see acknowledged records lost, or the test above proves nothing.
    @Test func theSameTestCatchesADaemonRunWithSynchronousOff() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        let outcome = try Self.run(
            cycles: 3, environment: ["OFFERTRACKD_TEST_ONLY_SYNCHRONOUS_OFF": "1"], seed: seed)
        print(
            "power loss with synchronous=OFF: \(outcome.acknowledged.count) acknowledged, \(outcome.lost.count) lost "
                + "(seed \(seed))")
        #expect(outcome.acknowledged.count > 100)
        #expect(!outcome.lost.isEmpty, "synchronous=OFF lost nothing: the power cut is not simulated (seed \(seed))")
    }
}
