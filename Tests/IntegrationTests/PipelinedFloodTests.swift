import Foundation
import Posix
import Synchronization
import TestSupport
import Testing

extension UnderAttack {
    /// A client that pipelines 100,000 lines and reads nothing is pushed back, not buffered without bound.
    @Suite struct PipelinedFloodTests {
        /// The probe's latency is judged against this run, not a fixed 2 s: its worst exchange while the flood
        /// pipelines may take its unloaded latency plus what commits at the flood's own pace meanwhile: the batch
        /// committing when its line arrives (taken while the flood was alone: up to `maxBatch`, 8,192 records) and
        /// its own (a shared one, at most `FairBatchTests.sharedBatch`, 2,048), with one shared batch to spare:
        /// six shared batches. Batches of 8,192 while the probe waits make it up to eight. `FairBatchTests` counts
        /// the commits exactly.
        @Test func clientThatNeverReadsIsPushedBackAndEveryLineIsAnsweredOnceItReads() throws {
            try AttackHarness.run(latencyBound: .seconds(3600)) { daemon in
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
                let batchDuringFlood = (clock.now - readStarted) / max(1, lines.count / FairBatchTests.sharedBatch)
                let probeWorst = worst.withLock { $0 }
                print(
                    "pipelined flood: probe worst \(probeWorst), unloaded \(probeUnloaded), batch \(batchDuringFlood)")
                #expect(
                    probeWorst <= probeUnloaded + batchDuringFlood * 6,
                    "the probe waited \(probeWorst) (unloaded \(probeUnloaded), a batch \(batchDuringFlood))")
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
