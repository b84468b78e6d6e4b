import Foundation
import Posix
import SQLite
import Synchronization
import TestSupport
import Testing

extension UnderAttack {
    /// A client that pipelines 100,000 lines and reads nothing is pushed back, not buffered without bound.
    @Suite struct PipelinedFloodTests {
        /// While the flood is read, a probe sends one line at a time and counts the records committed between its
        /// send and its own commit (`seq` distance from the journal's committed `max(seq)` just before the send): at
        /// most the batch committing then, one more that may start before the daemon reads the probe's line, and
        /// its own, where the flood's share is one quantum (`FairQueue`): under 3 × `maxBatch` (2,048). A count,
        /// not a time, so a busy machine's pauses do not move it (a time bound from the flood's average pace failed
        /// in a loaded run with the product right). A daemon giving the flood alone batches of its whole 4,096-line
        /// window exceeds it; one serving first come, first served reaches the flood's whole queue.
        @Test func clientThatNeverReadsIsPushedBackAndEveryLineIsAnsweredOnceItReads() throws {
            try AttackHarness.run(extraLatency: .seconds(3600)) { daemon in
                let probeClient = try LineClient(path: daemon.socketPath, receiveTimeoutSeconds: 60)
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
                Thread.sleep(forTimeInterval: 1)  // held back for a whole second: nothing is lost meanwhile

                // Now the client reads: every line it sent gets its answer, in order.
                UnixSocket.setSendTimeout(client.fd, seconds: 0)
                let rest = Array(payload[offset...])
                let fd = client.fd
                Thread { try? FileDescriptor.writeAll(fd, rest) }.start()
                let probing = Atomic<Bool>(true)
                let mostAhead = Atomic<Int64>(0)
                let probes = Atomic<Int>(0)
                nonisolated(unsafe) let probe = probeClient  // used only by the probing thread from here on
                let databasePath = daemon.databasePath
                let probeThread = Thread {
                    guard let journal = try? Connection(path: databasePath, mode: .readOnly) else { return }
                    var index = 0
                    while probing.load(ordering: .sequentiallyConsistent) {
                        let before = (try? journal.scalarInt("SELECT coalesce(max(seq), 0) FROM records")) ?? 0
                        let answer = probe.exchange([TestRecords.capabilities(id: "during-\(index)", user: "probe")])
                        if let seq = answer.first?.seq {
                            mostAhead.max(seq - before, ordering: .sequentiallyConsistent)
                            probes.add(1, ordering: .sequentiallyConsistent)
                        }
                        index += 1
                        Thread.sleep(forTimeInterval: 0.05)
                    }
                }
                probeThread.start()
                let answers = client.readAnswers(lines.count)
                probing.store(false, ordering: .sequentiallyConsistent)
                let ahead = mostAhead.load(ordering: .sequentiallyConsistent)
                let probed = probes.load(ordering: .sequentiallyConsistent)
                print("pipelined flood: \(probed) probes, at most \(ahead) records committed ahead of one")
                #expect(probed >= 3, "the flood was answered before the probe could measure it")
                #expect(ahead < 3 * 2048, "\(ahead) records were committed ahead of the probe")
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
