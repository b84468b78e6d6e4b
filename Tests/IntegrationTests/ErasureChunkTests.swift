import Foundation
import OfferTrackDomain
import Posix
import SQLite
import TestSupport
import Testing

/// An erasure of a person with many records, through the real daemon (SPEC 11, schema 13): the rename goes in
/// chunks between other clients' batches and the erasure is answered after the last one; killed during the chunks,
/// the next start finishes the rename before `READY=1`.
@Suite(.serialized) struct ErasureChunkTests {
    static let records = 20_000

    static func capabilities(_ person: String, _ index: Int) -> String {
        let ts = Timestamp.format(1_795_000_000_000 + Int64(index) * 1000)
        return
            #"{"type":"capabilities","id":"\#(person)-\#(index)","ts":"\#(ts)","user":"\#(person)","authorization":3,"capabilities":2}"#
    }

    static func erasure(_ id: String, of person: String) -> String {
        #"{"type":"erasure","id":"\#(id)","ts":"2026-11-20T00:00:00Z","user":"\#(person)","ticket":"T-1"}"#
    }

    /// Journals `records` records of `person` through the daemon.
    static func journal(_ person: String, in directory: ScratchDirectory, daemon: DaemonProcess) throws {
        let lines = (0..<records).map { capabilities(person, $0) }
        try lines.joined(separator: "\n").write(toFile: directory.file("p.ndjson"), atomically: true, encoding: .utf8)
        _ = try CLI.output(["ingest", directory.file("p.ndjson"), "--socket", daemon.socketPath])
    }

    /// Records of `person` still named so, and records of theirs renamed.
    static func counts(_ db: String, _ person: String) throws -> (named: Int64, renamed: Int64) {
        let journal = try Connection(path: db, mode: .readOnly)
        let named = try journal.scalarInt("SELECT count(*) FROM records WHERE user = '\(person)'") ?? -1
        let renamed =
            try journal.scalarInt("SELECT count(*) FROM records WHERE user LIKE 'erased:%' AND id LIKE '\(person)-%'")
            ?? -1
        return (named, renamed)
    }

    /// The erasure's answer, read on its own thread.
    final class ErasureAnswer: @unchecked Sendable {
        private let lock = NSLock()
        private var answer: (line: String?, at: ContinuousClock.Instant)?
        var value: (line: String?, at: ContinuousClock.Instant)? { lock.withLock { answer } }
        func set(_ line: String?, at instant: ContinuousClock.Instant) { lock.withLock { answer = (line, instant) } }
    }

    struct Run {
        let answer: Answer?
        let took: Duration
        /// The other client's answers that came before the erasure's (its records all sent after it).
        let othersBefore: Int
        let longestOther: Duration
    }

    /// Sends the erasure of `person` on one connection and, until it is answered, one record at a time on another
    /// (its second an erasure of another person, with one record).
    static func eraseWhileOthersSend(_ person: String, erasureID: String, daemon: DaemonProcess) throws -> Run {
        let eraser = try LineClient(path: daemon.socketPath)
        let other = try LineClient(path: daemon.socketPath)
        #expect(other.exchange([capabilities("other", -1), capabilities("small-person", 0)]).count == 2)
        let clock = ContinuousClock()
        let erasureAnswer = ErasureAnswer()
        let started = clock.now
        try eraser.send(erasure(erasureID, of: person) + "\n")
        let fd = eraser.fd
        let reader = Thread {
            let line = try? LineReader(fd: fd).nextLine()
            erasureAnswer.set(line.map { String(decoding: $0, as: UTF8.self) }, at: clock.now)
        }
        reader.start()
        var answeredAt: [ContinuousClock.Instant] = []
        var longest = Duration.zero
        while erasureAnswer.value == nil, answeredAt.count < 100_000 {
            let sent = clock.now
            // The other client's second line forgets someone else: answered at once, not after the large rename.
            let line =
                answeredAt.count == 1 ? erasure("e-small", of: "small-person") : capabilities("other", answeredAt.count)
            let answers = other.exchange([line])
            #expect(answers.first?.status == "accepted")
            answeredAt.append(clock.now)
            longest = max(longest, clock.now - sent)
        }
        while erasureAnswer.value == nil { usleep(1000) }
        let (line, at) = erasureAnswer.value ?? (nil, clock.now)
        return Run(
            answer: line.flatMap(Answer.init), took: at - started, othersBefore: answeredAt.filter { $0 < at }.count,
            longestOther: longest)
    }

    /// Another client's records are answered while a person with 20,000 records is renamed; the same erasure with
    /// the rename in one transaction (the daemon before schema 13, the baseline) answers them only after it.
    @Test func othersAreAnsweredWhileALargePersonIsRenamed() throws {
        var runs: [Run] = []
        for oneTransaction in [true, false] {
            let directory = ScratchDirectory("ot-erasure-chunks")
            let daemon = try DaemonProcess(
                in: directory, environment: oneTransaction ? ["OFFERTRACK_TEST_RENAME_IN_ONE_TRANSACTION": "1"] : [:])
            guard daemon.waitReady() else { return }
            let person = "big-person"
            try Self.journal(person, in: directory, daemon: daemon)
            let run = try Self.eraseWhileOthersSend(person, erasureID: "e-big", daemon: daemon)
            print(
                "ErasureChunkTests: \(oneTransaction ? "one transaction" : "in chunks"): the erasure answered after "
                    + "\(run.took), \(run.othersBefore) other answers before it, the longest other \(run.longestOther)")
            #expect(run.answer?.status == "accepted", "\(String(describing: run.answer))")
            #expect(try Self.counts(daemon.databasePath, person) == (0, Int64(Self.records)))
            DaemonProcess.terminateCleanly([daemon])
            let verify = try CLI.run(["verify", "--db", daemon.databasePath])
            #expect(verify.status == 0, "\(verify.output)")
            runs.append(run)
        }
        let (baseline, chunked) = (runs[0], runs[1])
        // In one transaction every record sent after the erasure waits for it (one may share its batch or precede it).
        #expect(baseline.othersBefore <= 2)
        // In chunks they are answered meanwhile, each well within the time the whole rename took in one transaction.
        #expect(chunked.othersBefore >= 3 && chunked.othersBefore > baseline.othersBefore)
        #expect(chunked.longestOther < baseline.took)
    }

    /// A chunk that fails is tried again on a timer: an idle daemon (no other client, no other commit) still
    /// answers the erasure once the rename is done, and says in its log why it waited.
    @Test func anIdleDaemonRetriesAFailedChunkAndAnswersTheErasure() throws {
        let directory = ScratchDirectory("ot-erasure-chunks-retry")
        let daemon = try DaemonProcess(
            in: directory,
            environment: ["OFFERTRACK_TEST_RENAME_ROWS_PER_CHUNK": "1000", "OFFERTRACK_TEST_RENAME_FAIL_CHUNKS": "3"])
        guard daemon.waitReady() else { return }
        let person = "idle-person"
        try Self.journal(person, in: directory, daemon: daemon)
        let eraser = try LineClient(path: daemon.socketPath, receiveTimeoutSeconds: 60)
        try eraser.send(Self.erasure("e-idle", of: person) + "\n")
        // Nothing else is sent: only the retries can finish the rename. The wait is the test's bound, far above
        // the three retries' 0.1 + 0.2 + 0.4 s.
        let answer = eraser.readLine()
        #expect(answer?.contains(#""status":"accepted""#) == true, "\(answer ?? "no answer")")
        #expect(try Self.counts(daemon.databasePath, person) == (0, Int64(Self.records)))
        DaemonProcess.terminateCleanly([daemon])
        let log = daemon.stderr
        #expect(log.contains("<3>offertrackd: an erasure's rename could not continue (retried in 100 ms)"), "\(log)")
        #expect(log.contains("(retried in 400 ms)"), "\(log)")
    }

    /// kill -9 between two chunks of the rename: the start after it finishes the rename before `READY=1`, `verify`
    /// passes, and the erasure sent again is a duplicate with its seq.
    @Test func killedDuringTheChunksTheNextStartFinishesTheRename() throws {
        let directory = ScratchDirectory("ot-erasure-chunks-kill")
        var daemon = try DaemonProcess(
            in: directory,
            environment: [
                "OFFERTRACK_TEST_RENAME_ROWS_PER_CHUNK": "1000", "OFFERTRACK_TEST_RENAME_KILL_AFTER_CHUNK": "4",
            ])
        guard daemon.waitReady() else { return }
        let db = daemon.databasePath
        let person = "kill-person"
        try Self.journal(person, in: directory, daemon: daemon)
        let eraser = try LineClient(path: daemon.socketPath)
        try eraser.send(Self.erasure("e-kill", of: person) + "\n")
        // Killed by its hook after the fourth chunk, before answering.
        #expect(eraser.readLine() == nil)
        _ = daemon.waitExit()
        let partial = try Self.counts(db, person)
        #expect(partial.named > 0 && partial.renamed > 0, "\(partial)")
        let unfinished = try CLI.run(["verify", "--db", db])
        #expect(unfinished.status != 0 && unfinished.output.contains("is unfinished"), "\(unfinished.output)")

        // A listener of its own: the first daemon's `READY=1` must not count for this one.
        daemon = try DaemonProcess(in: directory, notify: try NotifyListener(path: directory.file("notify-2.sock")))
        guard daemon.waitReady() else { return }
        #expect(try Self.counts(db, person) == (0, Int64(Self.records)))
        let journal = try Connection(path: db, mode: .readOnly)
        #expect(try journal.scalarInt("SELECT count(*) FROM pending_renames") == 0)
        let seq = try journal.scalarInt("SELECT seq FROM records WHERE id = 'e-kill'")
        let again = try LineClient(path: daemon.socketPath).exchange([Self.erasure("e-kill", of: person)])
        #expect(again.first?.status == "duplicate" && again.first?.seq == seq, "\(again)")
        DaemonProcess.terminateCleanly([daemon])
        let verify = try CLI.run(["verify", "--db", db])
        #expect(verify.status == 0, "\(verify.output)")
    }
}
