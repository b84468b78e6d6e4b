import Foundation
import Posix
import TestSupport
import Testing

extension UnderAttack {
    /// Clients that go quiet or away: silent, half a line, acknowledgements never read.
    @Suite struct AbandonedConnectionTests {
        @Test func silentClientsAreClosedAfterTheIdleTimeout() throws {
            try AttackHarness.run(arguments: ["--idle-timeout", "2"]) { daemon in
                let status = ProcessStatus(pid: daemon.pid)
                let before = status.openDescriptors ?? 0
                let silent = try (0..<200).map { _ in try LineClient(path: daemon.socketPath, receiveTimeoutSeconds: 6)
                }
                Thread.sleep(forTimeInterval: 0.5)
                // ±1: sd_notify opens a socket for each notification, so a sample may catch one in flight.
                #expect((status.openDescriptors ?? 0) >= before + 199, "the silent clients were not accepted")
                // Each read ends with end of stream (the daemon closed it), not with the receive timeout.
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 1)
                defer { buffer.deallocate() }
                for client in silent {
                    let result = try? FileDescriptor.read(client.fd, into: buffer)
                    #expect(
                        result == .transferred(0), "a silent connection was not closed: \(String(describing: result))")
                }
                #expect((status.openDescriptors ?? .max) <= before + 1, "descriptors leaked")
                return []
            }
        }

        @Test func halfLinesAreProcessedAtEndOfStreamOrDroppedWithTheConnection() throws {
            let stopped = try AttackHarness.run { daemon in
                let record = TestRecords.capabilities(id: "half-1")
                let half = String(record.prefix(record.count / 2))

                // Half a line, then the connection is closed outright: nothing to answer, nothing journaled.
                do {
                    let closing = try LineClient(path: daemon.socketPath)
                    try closing.send(half)
                }  // closed here

                // Half a line, then end of stream: the final line is processed and answered (invalid JSON).
                let halfClosed = try LineClient(path: daemon.socketPath)
                try halfClosed.send(half)
                halfClosed.finishSending()
                #expect(halfClosed.readAnswer()?.code == "invalid_json")
                #expect(halfClosed.next() == .endOfStream)

                // A whole record without its newline, then end of stream: accepted.
                let unterminated = try LineClient(path: daemon.socketPath)
                try unterminated.send(TestRecords.capabilities(id: "whole-no-newline"))
                unterminated.finishSending()
                let answer = unterminated.readAnswer()
                #expect(answer?.status == "accepted", "\(answer?.raw ?? "no answer")")
                return answer.map { [$0] } ?? []
            }
            // Neither half line was journaled: only the whole record is (besides the harness's probes).
            let journal = try JournalInspector(path: try #require(stopped).databasePath).seqByID()
            #expect(journal.keys.filter { !$0.hasPrefix("probe-") } == ["whole-no-newline"], "\(journal)")
        }

        @Test func clientThatClosesWithAcknowledgementsUnreadLosesNothingItWasToldAbout() throws {
            let lines = TestRecords.stream(prefix: "unread", count: 20_000)
            var retried: [Answer] = []
            let daemon = try AttackHarness.run { daemon in
                do {
                    let writer = try LineClient(path: daemon.socketPath)
                    UnixSocket.setSendTimeout(writer.fd, seconds: 2)
                    // May stop early (the daemon pushes back, nobody reads the answers); that is fine.
                    try? writer.send(lines: lines)
                }  // closed here, its answers unread

                // The same lines again, read this time: each is accepted or a duplicate of what was journaled.
                let reader = try LineClient(path: daemon.socketPath)
                retried = reader.exchange(lines)
                #expect(retried.count == lines.count)
                #expect(retried.allSatisfy { $0.status == "accepted" || $0.status == "duplicate" })
                return retried
            }
            guard let daemon else { return }
            let journal = try JournalInspector(path: daemon.databasePath).seqByID()
            #expect(journal.keys.filter { $0.hasPrefix("unread-") }.count == lines.count)
            #expect(retried.contains { $0.status == "duplicate" }, "the unread connection's records were not kept")
        }
    }
}
