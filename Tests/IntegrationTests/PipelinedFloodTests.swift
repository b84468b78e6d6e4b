import Foundation
import Posix
import Synchronization
import TestSupport
import Testing

extension UnderAttack {
    /// A client that pipelines 100,000 lines and reads nothing is pushed back, not buffered without bound.
    @Suite struct PipelinedFloodTests {
        /// The probe's latency is judged against this run, not a fixed 2 s: its worst exchange while the flood
        /// pipelines may take its unloaded latency plus what commits meanwhile at the flood's own pace (per record,
        /// in this run): the batch committing when its line arrives, taken while the flood was alone (up to
        /// `maxBatch`, 8,192 records), and its own, where the flood's share is one quantum (1,024, `FairQueue`),
        /// with a quantum to spare: 10,240 records. (With one flooder the shared batch's 2,048 never binds: its
        /// quantum does.) Batches first come, first served make it up to 16,384. `FairBatchTests` counts the
        /// commits exactly.
        @Test func clientThatNeverReadsIsPushedBackAndEveryLineIsAnsweredOnceItReads() throws {
            try AttackHarness.run(extraLatency: .seconds(3600)) { daemon in
                let probeClient = try LineClient(path: daemon.socketPath, receiveTimeoutSeconds: 60)
                let clock = ContinuousClock()
                var unloaded: [Duration] = []
                for index in 0..<10 {
                    let started = clock.now
                    _ = probeClient.exchange([TestRecords.capabilities(id: "unloaded-\(index)", user: "probe")])
                    unloaded.append(clock.now - started)
                }
                let probeUnloaded = unloaded.sorted()[unloaded.count / 2]

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
                let readStarted = clock.now
                Thread { try? FileDescriptor.writeAll(fd, rest) }.start()
                let probing = Atomic<Bool>(true)
                let worst = Mutex<Duration>(.zero)
                nonisolated(unsafe) let probe = probeClient  // used only by the probing thread from here on
                let probeThread = Thread {
                    var index = 0
                    while probing.load(ordering: .sequentiallyConsistent) {
                        let started = clock.now
                        _ = probe.exchange([TestRecords.capabilities(id: "during-\(index)", user: "probe")])
                        let latency = clock.now - started
                        worst.withLock { $0 = max($0, latency) }
                        index += 1
                        Thread.sleep(forTimeInterval: 0.05)
                    }
                }
                probeThread.start()
                let answers = client.readAnswers(lines.count)
                probing.store(false, ordering: .sequentiallyConsistent)
                let perRecord = (clock.now - readStarted) / lines.count
                let probeWorst = worst.withLock { $0 }
                let bound = probeUnloaded + perRecord * (8192 + 2 * 1024)
                print(
                    "pipelined flood: probe worst \(probeWorst), unloaded \(probeUnloaded), "
                        + "\(perRecord * 1024) per 1,024 records, bound \(bound)")
                #expect(
                    probeWorst <= bound,
                    "the probe waited \(probeWorst) (unloaded \(probeUnloaded), \(perRecord * 1024) per 1,024 records)")
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
