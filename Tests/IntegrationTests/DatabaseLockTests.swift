import Foundation
import Posix
import SQLite
import TestSupport
import Testing

extension UnderAttack {
    /// Another writer holds the journal's write lock longer than the daemon's 2 s busy timeout.
    @Suite struct DatabaseLockTests {
        @Test func lockedJournalIsAnsweredStorageUnavailableThenAcceptsAgain() throws {
            let directory = ScratchDirectory()
            let daemon = try DaemonProcess(in: directory)
            guard daemon.waitReady() else { return }
            let client = try LineClient(path: daemon.socketPath)
            #expect(client.exchange([TestRecords.capabilities(id: "before-lock")]).first?.status == "accepted")

            let other = try Connection(path: daemon.databasePath, mode: .readWriteCreate)
            try other.execute("BEGIN IMMEDIATE")
            let lines = TestRecords.stream(prefix: "locked", count: 50)
            let started = ContinuousClock.now
            let refused = client.exchange(lines)
            let waited = ContinuousClock.now - started
            #expect(refused.count == lines.count)
            #expect(refused.allSatisfy { $0.code == "storage_unavailable" }, "\(refused.first?.raw ?? "none")")
            #expect(waited >= .milliseconds(1900), "refused after \(waited), before the busy timeout")
            #expect(daemon.notify.waitFor(timeout: 5) { $0.contains("JOURNAL FAILING") } != nil)

            try other.execute("COMMIT")
            let retried = client.exchange(lines)
            #expect(retried.allSatisfy { $0.status == "accepted" }, "\(retried.first?.raw ?? "none")")

            daemon.signal(Signals.terminate)
            #expect(daemon.waitExit() == 0)
            let journal = try JournalInspector(path: daemon.databasePath).seqByID()
            for answer in retried { #expect(journal[answer.id ?? ""] == answer.seq) }
            #expect(journal.count == lines.count + 1)
        }
    }
}
