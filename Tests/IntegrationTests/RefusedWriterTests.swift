import Foundation
import Posix
import TestSupport
import Testing

extension UnderAttack {
    /// A refused peer that streams without pause cannot hold the event loop: its input is discarded a few reads a
    /// wakeup, like a connection's.
    @Suite struct RefusedWriterTests {
        /// Connects as `nobody` and sends 1 MiB writes without pause for `seconds`, connecting again whenever the
        /// daemon closes the connection.
        static let writer = """
            import socket, sys, time
            end = time.time() + float(sys.argv[2])
            chunk = b"x" * (1 << 20)
            while time.time() < end:
                s = socket.socket(socket.AF_UNIX)
                try:
                    s.connect(sys.argv[1])
                    while time.time() < end:
                        s.send(chunk)
                except OSError:
                    pass
                s.close()
            """

        /// Two refused writers stream for 3 s at a daemon under strace (which slows its reads, so a writer keeps
        /// its socket full): between two `epoll_wait`s the event loop reads one descriptor at most 4 times
        /// (`Daemon.readsPerWakeup`); draining a refused peer until `EAGAIN` read it hundreds of times in a row.
        /// An allowed client is served meanwhile.
        @Test func aRefusedPeerStreamingWithoutPauseIsReadAFewTimesAWakeup() throws {
            let directory = ScratchDirectory()
            let trace = directory.file("strace.out")
            let traced = try TracedDaemon(in: directory, trace: "epoll_wait,read", output: trace)
            guard traced.daemon.waitReady() else { return }
            chmod(directory.path, 0o755)
            chmod(traced.daemon.socketPath, 0o666)
            let socketPath = traced.daemon.socketPath
            let writers = (0..<2).map { _ in
                Thread {
                    _ = try? Shell.run(
                        "/usr/bin/setpriv",
                        [
                            "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", Self.writer,
                            socketPath, "3",
                        ])
                }
            }
            writers.forEach { $0.start() }
            let started = Date()
            Thread.sleep(forTimeInterval: 0.5)
            let client = try LineClient(path: socketPath, receiveTimeoutSeconds: 10)
            var served: [String] = []
            for index in 0..<10 {
                served += client.exchange([TestRecords.capabilities(id: "beside-writer-\(index)")]).map(\.status)
                Thread.sleep(forTimeInterval: 0.1)
            }
            #expect(served == Array(repeating: "accepted", count: 10), "an allowed client was not served: \(served)")
            Thread.sleep(forTimeInterval: max(0, 3.5 - Date().timeIntervalSince(started)))
            #expect(traced.stop() == 0)
            let most = Self.mostReadsOfOneDescriptorBetweenWaits(try String(contentsOfFile: trace, encoding: .utf8))
            print("refused writers: at most \(most) reads of one descriptor between two epoll_waits")
            #expect(most > 0 && most <= 4, "the event loop read one descriptor \(most) times in one wakeup")
        }

        /// From strace's lines (`TID TIME call(…`): the longest run of `read`s of one descriptor by the thread that
        /// calls `epoll_wait` with no `epoll_wait` between them.
        static func mostReadsOfOneDescriptorBetweenWaits(_ trace: String) -> Int {
            let lines = trace.split(separator: "\n").map { $0.split(separator: " ", maxSplits: 2) }
            guard let loop = lines.first(where: { $0.count == 3 && $0[2].hasPrefix("epoll_wait(") })?.first else {
                return 0
            }
            var most = 0
            var run: (fd: Substring, reads: Int)?
            var looping = false  // the loader's reads come before the first epoll_wait
            for line in lines where line.count == 3 && line[0] == loop {
                if line[2].hasPrefix("epoll_wait(") || line[2].hasPrefix("<... epoll_wait") {
                    run = nil
                    looping = true
                } else if looping && line[2].hasPrefix("read(") {
                    let fd = line[2].dropFirst("read(".count).prefix { $0.isNumber }
                    run = (fd, run?.fd == fd ? (run?.reads ?? 0) + 1 : 1)
                    most = max(most, run?.reads ?? 0)
                }
            }
            return most
        }
    }
}
