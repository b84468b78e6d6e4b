import Foundation
import Posix
import TestSupport
import Testing

/// Socket activation through `systemd-socket-activate`, which passes LISTEN_FDS/LISTEN_PID like systemd.
@Suite struct SocketActivationTests {
    @Test func anActivatedSocketIsServedForTheDaemonsWholeLife() throws {
        let directory = ScratchDirectory()
        let socketPath = directory.file("activated.sock")
        let daemon = try DaemonProcess(
            in: directory, launcher: ["/usr/bin/systemd-socket-activate", "-l", socketPath, "-E", "NOTIFY_SOCKET"])
        // The launcher listens first; the daemon is started on the first connection.
        let first = try LineClient.connectWhenListening(path: socketPath)
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

    /// An abstract socket has no file mode to keep other users out: the daemon refuses it at start (exit 78).
    @Test func anActivatedAbstractSocketIsRefusedWithExit78() throws {
        let directory = ScratchDirectory()
        let name = "offertrack-test-\(UInt32.random(in: 0...UInt32.max))"
        let log = directory.file("daemon.log")
        let launcher = try SpawnedProcess(
            ["/usr/bin/systemd-socket-activate", "-l", "@\(name)", Binaries.daemon, "--db", directory.file("ot.db")],
            environment: ["PATH": "/usr/bin:/bin"], stderrPath: log)
        // The launcher starts the daemon on the first connection.
        let connect = """
            import socket, sys, time
            for _ in range(200):
                try:
                    socket.socket(socket.AF_UNIX).connect("\\0" + sys.argv[1])
                    break
                except OSError:
                    time.sleep(0.05)
            """
        _ = try Shell.run("/usr/bin/python3", ["-c", connect, name])
        #expect(launcher.waitExit(timeout: 20) == 78)
        let stderr = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(stderr.contains("abstract"), "\(stderr)")
    }
}
