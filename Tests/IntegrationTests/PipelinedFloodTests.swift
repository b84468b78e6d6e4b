import Foundation
import Posix
import Testing

extension UnderAttack {
    /// A client that pipelines 100,000 lines and reads nothing is pushed back, not buffered without bound.
    @Suite struct PipelinedFloodTests {
        @Test func clientThatNeverReadsIsPushedBackAndEveryLineIsAnsweredOnceItReads() throws {
            try AttackHarness.run { daemon in
                let client = try LineClient(path: daemon.socketPath, receiveTimeoutSeconds: 30)
                let lines = TestRecords.stream(prefix: "flood", count: 100_000)
                let payload = Array(lines.map { $0 + "\n" }.joined().utf8)

                // Write without ever reading until the daemon stops taking bytes for a whole second.
                UnixSocket.setSendTimeout(client.fd, seconds: 1)
                var offset = 0
                while offset < payload.count {
                    let result = payload.withUnsafeBytes { raw in
                        try? FileDescriptor.write(client.fd, from: UnsafeRawBufferPointer(rebasing: raw[offset...]))
                    }
                    guard case .transferred(let count)? = result, count > 0 else { break }
                    offset += count
                }
                #expect(offset < payload.count, "the daemon took all \(payload.count) bytes without pushing back")
                Thread.sleep(forTimeInterval: 1)  // the probe keeps exchanging while the flood is held back

                // Now the client reads: every line it sent gets its answer, in order.
                UnixSocket.setSendTimeout(client.fd, seconds: 0)
                let rest = Array(payload[offset...])
                let fd = client.fd
                Thread { try? FileDescriptor.writeAll(fd, rest) }.start()
                let answers = client.readAnswers(lines.count)
                #expect(answers.count == lines.count)
                #expect(
                    answers.allSatisfy { $0.status == "accepted" },
                    "\(answers.first { $0.status != "accepted" }?.raw ?? "")")
                #expect(zip(answers, lines.indices).allSatisfy { $0.id == "flood-\($1)" }, "answers out of order")
                return answers
            }
        }
    }
}
