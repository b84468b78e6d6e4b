import Foundation
import Posix
import TestSupport
import Testing

extension UnderAttack {
    /// Faults at start: the journal's directory read-only or missing, the socket path taken or stale.
    @Suite struct StartupFaultTests {
        @Test func readOnlyDatabaseDirectoryIsAClearErrorWithExit73() throws {
            let directory = ScratchDirectory()
            // Root ignores permission bits: only a read-only mount really refuses writes.
            let disk = try SmallFilesystem(in: directory, name: "ro", size: "1m", readOnly: true)
            let readOnly = disk.path
            let daemon = try DaemonProcess(in: directory, databasePath: "\(readOnly)/offertrack.db")
            StartupRefusal.expect(daemon, code: 73, mentioning: "\(readOnly)/offertrack.db")
        }

        @Test func missingDatabaseDirectoryIsAClearErrorWithExit73() throws {
            let directory = ScratchDirectory()
            let gone = directory.file("gone/offertrack.db")
            let daemon = try DaemonProcess(in: directory, databasePath: gone)
            StartupRefusal.expect(daemon, code: 73, mentioning: gone)
        }

        @Test func socketOfALiveDaemonIsRefusedWithExit69() throws {
            let directory = ScratchDirectory()
            let first = try DaemonProcess(in: directory)
            guard first.waitReady() else { return }
            let second = try DaemonProcess(
                in: directory, notify: NotifyListener(in: ScratchDirectory()), databasePath: directory.file("b.db"))
            StartupRefusal.expect(second, code: 69, mentioning: "in use")
            // The first daemon still owns the socket and serves.
            let answer = try LineClient(path: first.socketPath).exchange([TestRecords.capabilities(id: "still")])
            #expect(answer.first?.status == "accepted")
            first.signal(Signals.terminate)
            #expect(first.waitExit() == 0)
        }

        @Test func staleSocketFileIsReplaced() throws {
            let directory = ScratchDirectory()
            // A socket file nobody listens on any more, as a crashed daemon leaves it.
            let stale = try UnixSocket.listen(path: directory.file("offertrack.sock"), mode: 0o660)
            FileDescriptor.close(stale)
            #expect(FileManager.default.fileExists(atPath: directory.file("offertrack.sock")))
            let daemon = try DaemonProcess(in: directory)
            guard daemon.waitReady() else { return }
            let answer = try LineClient(path: daemon.socketPath).exchange([TestRecords.capabilities(id: "fresh")])
            #expect(answer.first?.status == "accepted")
            daemon.signal(Signals.terminate)
            #expect(daemon.waitExit() == 0)
        }
    }
}
