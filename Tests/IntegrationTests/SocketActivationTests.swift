import Foundation
import Posix
import Testing

/// Socket activation through `systemd-socket-activate`, which passes LISTEN_FDS/LISTEN_PID like systemd.
@Suite struct SocketActivationTests {
    @Test func anActivatedSocketIsServedForTheDaemonsWholeLife() throws {
        let directory = ScratchDirectory()
        let socketPath = directory.file("activated.sock")
        let daemon = try DaemonProcess(
            in: directory, launcher: ["/usr/bin/systemd-socket-activate", "-l", socketPath, "-E", "NOTIFY_SOCKET"])
        // The launcher listens first; the daemon is started on the first connection.
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socketPath) && Date() < deadline { usleep(10_000) }
        let first = try LineClient(path: socketPath)
        #expect(first.exchange([TestRecords.capabilities(id: "act-1")]).map(\.status) == ["accepted"])
        #expect(daemon.notify.waitFor(line: "READY=1") != nil)
        first.finishSending()
        #expect(first.next() == .endOfStream)
        for index in 2...5 {
            let next = try LineClient(path: socketPath)
            #expect(next.exchange([TestRecords.capabilities(id: "act-\(index)")]).map(\.status) == ["accepted"])
        }
        // It did not bind its own default socket.
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
        #expect(try JournalInspector(path: daemon.databasePath).count() == 5)
    }
}
