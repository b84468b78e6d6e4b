import Foundation
import Posix
import SQLite
import TestSupport
import Testing

/// Framing, ordering and idempotency on the wire (SPEC section 2), against the real daemon.
@Suite struct WireProtocolTests {
    let directory = ScratchDirectory()

    private func startDaemon(_ arguments: [String] = []) throws -> DaemonProcess? {
        let daemon = try DaemonProcess(in: directory, arguments: arguments)
        return daemon.waitReady() ? daemon : nil
    }

    @Test func answersComeInInputOrderWithRejectionsInterleaved() throws {
        guard let daemon = try startDaemon() else { return }
        let client = try LineClient(path: daemon.socketPath)
        let answers = client.exchange([
            TestRecords.capabilities(id: "o-1"),
            #"{"type":"nope","id":"o-2"}"#,
            "not json",
            TestRecords.presented(id: "o-3"),
            #"{"type":"capabilities","id":"o-4","ts":"2026-11-28 10:00:00Z","user":"u"}"#,
        ])
        #expect(answers.map(\.status) == ["accepted", "rejected", "rejected", "accepted", "rejected"])
        #expect(answers.map(\.id) == ["o-1", "o-2", nil, "o-3", "o-4"])
        #expect(answers.map(\.code) == [nil, "unknown_type", "invalid_json", nil, "invalid_field"])
        #expect(answers[4].field == "ts")
        let seqs = answers.compactMap(\.seq)
        #expect(seqs.count == 2 && seqs[0] < seqs[1])
    }

    @Test func emptyLinesGetNoAnswerButBlankOnesDo() throws {
        guard let daemon = try startDaemon() else { return }
        let client = try LineClient(path: daemon.socketPath)
        try client.send("\n\r\n" + TestRecords.capabilities(id: "e-1") + "\r\n   \n")
        client.finishSending()
        let answers = client.readAnswers(10)
        #expect(answers.map(\.status) == ["accepted", "rejected"])
        #expect(answers.last?.code == "invalid_json")
    }

    @Test func finalUnterminatedLineIsProcessed() throws {
        guard let daemon = try startDaemon() else { return }
        let client = try LineClient(path: daemon.socketPath)
        try client.send(TestRecords.capabilities(id: "u-1") + "\n" + TestRecords.capabilities(id: "u-2"))
        client.finishSending()
        let answers = client.readAnswers(5)
        #expect(answers.map(\.id) == ["u-1", "u-2"])
        #expect(answers.allSatisfy { $0.status == "accepted" })
        #expect(client.next() == .endOfStream, "the daemon closes after answering everything")
    }

    @Test func overLongLineIsDiscardedAndTheConnectionKept() throws {
        guard let daemon = try startDaemon(["--max-line-bytes", "300"]) else { return }
        let client = try LineClient(path: daemon.socketPath)
        let exactly300 = TestRecords.capabilities(id: "l-1")
        let padded = String(exactly300.dropLast()) + String(repeating: " ", count: 300 - exactly300.count) + "}"
        #expect(padded.utf8.count == 300)
        let tooLong = String(repeating: "x", count: 301)
        let withCR = String(padded.dropLast(1).dropLast()) + "}\r"  // 299 + \r = 300 bytes: within the limit
        let answers = client.exchange([
            padded, tooLong, String(repeating: "y", count: 100_000), TestRecords.capabilities(id: "l-2"),
            withCR.replacingOccurrences(of: "l-1", with: "l-3"),
        ])
        #expect(answers.map(\.status) == ["accepted", "rejected", "rejected", "accepted", "accepted"])
        #expect(answers[1].code == "line_too_long" && answers[1].id == nil)
        #expect(answers[2].code == "line_too_long")
    }

    @Test func duplicateAndConflictAreDecidedByContent() throws {
        guard let daemon = try startDaemon() else { return }
        let client = try LineClient(path: daemon.socketPath)
        let original =
            #"{"type":"capabilities","id":"d-1","ts":"2026-11-28T10:00:00.500Z","user":"u","authorization":3,"capabilities":1,"extra":10}"#
        let reordered =
            #"{ "extra": 1.0e1, "capabilities" : 1, "authorization":3, "user":"\u0075", "ts":"2026-11-28T10:00:00.500Z","id":"d-1","type":"capabilities"}"#
        let otherTimestampSpelling =
            #"{"type":"capabilities","id":"d-1","ts":"2026-11-28T10:00:00.5Z","user":"u","authorization":3,"capabilities":1,"extra":10}"#
        let answers = client.exchange([original, reordered, otherTimestampSpelling, original])
        #expect(answers.map(\.status) == ["accepted", "duplicate", "rejected", "duplicate"])
        #expect(answers[1].seq == answers[0].seq && answers[3].seq == answers[0].seq)
        #expect(answers[2].code == "id_conflict")
        // The journal holds the original line verbatim, once.
        let journal = try JournalInspector(path: daemon.databasePath)
        #expect(try journal.count() == 1)
        #expect(try journal.connection.scalarText("SELECT line FROM records WHERE id = 'd-1'") == original)
    }

    @Test func seqIncreasesAlongOneConnectionAcrossBatches() throws {
        guard let daemon = try startDaemon() else { return }
        let client = try LineClient(path: daemon.socketPath)
        let answers = client.exchange(TestRecords.stream(prefix: "q", count: 5000))
        #expect(answers.count == 5000)
        let seqs = answers.compactMap(\.seq)
        #expect(seqs.count == 5000)
        #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 })
    }

    /// Closed after the timeout (1 s) and before the next idle sweep after it (they run every second) plus an idle
    /// turn of the event loop (250 ms) and twice how late this machine woke a sleeping thread meanwhile.
    @Test func idleConnectionsAreClosedAfterTheTimeout() throws {
        guard let daemon = try startDaemon(["--idle-timeout", "1"]) else { return }
        let client = try LineClient(path: daemon.socketPath, receiveTimeoutSeconds: 10)
        let measuring = WakeupLateness()
        let start = Date()
        #expect(client.next() == .endOfStream)
        let waited = Date().timeIntervalSince(start)
        let bound = 1 + 1 + 0.25 + 2 * measuring.stop()
        #expect(waited >= 0.9 && waited < bound, "closed after \(waited) s (bound \(bound) s)")
        // Others are still served.
        let other = try LineClient(path: daemon.socketPath)
        #expect(other.exchange([TestRecords.capabilities(id: "idle-2")]).map(\.status) == ["accepted"])
    }

    @Test func connectionsBeyondTheLimitWaitAndAreServedLater() throws {
        guard let daemon = try startDaemon(["--max-connections", "2"]) else { return }
        let first = try LineClient(path: daemon.socketPath)
        let second = try LineClient(path: daemon.socketPath)
        #expect(first.exchange([TestRecords.capabilities(id: "m-1")]).first?.status == "accepted")
        #expect(second.exchange([TestRecords.capabilities(id: "m-2")]).first?.status == "accepted")
        // The third connects (the kernel's backlog) but is not served while two are open.
        let third = try LineClient(path: daemon.socketPath, receiveTimeoutSeconds: 1)
        try third.send(lines: [TestRecords.capabilities(id: "m-3")])
        #expect(third.next() == .timedOut, "the third connection was answered or closed instead of waiting")
        first.finishSending()
        #expect(first.next() == .endOfStream)
        let answer = try LineClient.waitForAnswer(third, timeout: 5)
        #expect(answer?.status == "accepted" && answer?.id == "m-3")
    }
}

extension LineClient {
    /// Reads one answer, retrying over receive timeouts until `timeout` passes.
    static func waitForAnswer(_ client: LineClient, timeout: TimeInterval) throws -> Answer? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let answer = client.readAnswer() { return answer }
        }
        return nil
    }
}
