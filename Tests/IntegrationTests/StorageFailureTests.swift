import Foundation
import Posix
import TestSupport
import Testing

/// A full disk: records are answered storage_unavailable, never acknowledged, and accepted once room is back.
@Suite struct StorageFailureTests {
    @Test func fullDiskIsAnsweredStorageUnavailableAndRecoversByItself() throws {
        let directory = ScratchDirectory()
        let disk = try SmallFilesystem(in: directory, size: "32m")
        let daemon = try DaemonProcess(in: directory, databasePath: "\(disk.path)/offertrack.db")
        guard daemon.waitReady() else { return }
        let client = try LineClient(path: daemon.socketPath)
        let warmup = client.exchange(TestRecords.stream(prefix: "warm", count: 100))
        #expect(warmup.allSatisfy { $0.status == "accepted" })

        try disk.fill()

        let lines = TestRecords.stream(prefix: "full", count: 20000)
        let answers = client.exchange(lines)
        #expect(answers.count == lines.count)
        let unavailable = answers.filter { $0.code == "storage_unavailable" }
        #expect(!unavailable.isEmpty, "the disk was full but nothing was refused")
        #expect(answers.allSatisfy { $0.status == "accepted" || $0.code == "storage_unavailable" })
        #expect(
            daemon.notify.waitFor(timeout: 5) { $0.contains("JOURNAL FAILING") } != nil,
            "STATUS= does not say the journal is failing")

        // Room comes back: the same lines are retried with the same ids and accepted.
        try disk.free()
        let retried = lines.enumerated().filter { answers[$0.offset].code == "storage_unavailable" }.map(\.element)
        let second = client.exchange(retried)
        #expect(second.count == retried.count)
        #expect(second.allSatisfy { $0.status == "accepted" || $0.status == "duplicate" }, "\(second.prefix(3))")

        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
        let inspector = try JournalInspector(path: daemon.databasePath)
        #expect(try inspector.integrityCheck() == "ok")
        let journal = try inspector.seqByID()
        for answer in warmup + answers + second where answer.status == "accepted" {
            #expect(journal[answer.id ?? ""] == answer.seq)
        }
        for answer in answers where answer.code == "storage_unavailable" {
            // Refused the first time; journaled only through the retry.
            #expect(journal[answer.id ?? ""] != nil)
        }
        #expect(try inspector.count() == 100 + 20000)
    }
}
