import Foundation
import OfferTrackDomain
import Posix
import Simulator
import TestSupport
import Testing

extension UnderAttack {
    /// Lines the daemon cannot use: a 10 MiB line with no newline, and random binary garbage.
    @Suite struct OversizedInputTests {
        @Test func tenMebibyteLineIsRefusedAtOnceAndTheConnectionKeepsWorking() throws {
            try AttackHarness.run { daemon in
                let client = try LineClient(path: daemon.socketPath)
                let huge = [UInt8](repeating: UInt8(ascii: "a"), count: 10 << 20)
                let fd = client.fd
                let writer = Thread { try? FileDescriptor.writeAll(fd, huge) }
                writer.start()
                // Answered as soon as the line is known to be too long, long before its end (it never ends).
                let refusal = client.readAnswer()
                #expect(refusal?.code == "line_too_long", "\(refusal?.raw ?? "no answer")")
                #expect(refusal?.id == nil)
                while writer.isExecuting { usleep(10_000) }

                // The rest of the line is discarded up to the newline; the next line is served.
                try client.send("\n" + TestRecords.capabilities(id: "after-huge") + "\n")
                let after = client.readAnswer()
                #expect(after?.status == "accepted" && after?.id == "after-huge", "\(after?.raw ?? "no answer")")

                // An over-long final line without a newline is refused once at the end of the stream too.
                try client.send(String(repeating: "b", count: 70_000))
                client.finishSending()
                #expect(client.readAnswer()?.code == "line_too_long")
                #expect(client.next() == .endOfStream, "more answers than lines")
                return after.map { [$0] } ?? []
            }
        }

        @Test func randomBinaryGarbageGetsOneRejectionPerLine() throws {
            try AttackHarness.run { daemon in
                var generator = SeededGenerator(seed: 0x5EED)
                var garbage = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                garbage.append(UInt8(ascii: "\n"))
                // How many lines the daemon must answer, counted from SPEC section 2's text, not with the daemon's
                // own LineFramer: every `\n`-terminated line but those empty after dropping one trailing `\r`
                // (an over-long one is answered once, line_too_long).
                let expected = garbage.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
                    .dropLast()  // after the final newline: nothing
                    .filter { !($0.isEmpty || ($0.count == 1 && $0.first == UInt8(ascii: "\r"))) }.count

                let client = try LineClient(path: daemon.socketPath)
                let fd = client.fd
                let payload = garbage + Array((TestRecords.capabilities(id: "after-garbage") + "\n").utf8)
                Thread { try? FileDescriptor.writeAll(fd, payload) }.start()
                let answers = client.readAnswers(expected + 1)
                #expect(answers.count == expected + 1, "\(answers.count) answers for \(expected + 1) lines")
                #expect(answers.dropLast().allSatisfy { $0.status == "rejected" })
                #expect(answers.last?.status == "accepted" && answers.last?.id == "after-garbage")
                return answers.suffix(1)
            }
        }
    }
}
