import Foundation
import OfferTrackDomain
import Posix
import SQLite
import TestSupport
import Testing

/// An erasure of a person with many records, through the real daemon (SPEC 11, schema 13, issue 47): the rename
/// goes in chunks back to back, between other clients' batches when there are any and with none at all; the erasure
/// is answered once at most `RenameTuning.rowsLeftAtAnswer` of its person's records are left to rename (at once
/// for these persons); killed during the chunks, the next start finishes the rename before `READY=1`.
@Suite(.serialized) struct ErasureChunkTests {
    static let records = 20_000

    /// A record of `person`, its id `<ids>-<index>` (`ids`: the person's id unless given).
    static func capabilities(_ person: String, _ index: Int, ids: String? = nil) -> String {
        let ts = Timestamp.format(1_795_000_000_000 + Int64(index) * 1000)
        return
            #"{"type":"capabilities","id":"\#(ids ?? person)-\#(index)","ts":"\#(ts)","user":"\#(person)","authorization":3,"capabilities":2}"#
    }

    static func erasure(_ id: String, of person: String) -> String {
        #"{"type":"erasure","id":"\#(id)","ts":"2026-11-20T00:00:00Z","user":"\#(person)","ticket":"T-1"}"#
    }

    /// Journals `records` records of `person` through the daemon (their ids `<ids>-<index>`).
    static func journal(
        _ person: String, ids: String? = nil, in directory: ScratchDirectory, daemon: DaemonProcess
    ) throws {
        let lines = (0..<records).map { capabilities(person, $0, ids: ids) }
        try lines.joined(separator: "\n").write(toFile: directory.file("p.ndjson"), atomically: true, encoding: .utf8)
        _ = try CLI.output(["ingest", directory.file("p.ndjson"), "--socket", daemon.socketPath])
    }

    /// Records of `person` still named so, and records of theirs (ids `<ids>-…`) renamed.
    static func counts(_ db: String, _ person: String, ids: String? = nil) throws -> (named: Int64, renamed: Int64) {
        let journal = try Connection(path: db, mode: .readOnly)
        let named = try journal.scalarInt("SELECT count(*) FROM records WHERE user = '\(person)'") ?? -1
        let renamed =
            try journal.scalarInt(
                "SELECT count(*) FROM records WHERE user LIKE 'erased:%' AND id LIKE '\(ids ?? person)-%'") ?? -1
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
    /// the rename in one transaction (the daemon before schema 13, the baseline) answers them only after it. Both
    /// answer the erasure only after the whole rename (`OFFERTRACK_TEST_RENAME_ROWS_LEFT_AT_ANSWER` 0), so that
    /// its answer marks the rename's end.
    @Test func othersAreAnsweredWhileALargePersonIsRenamed() throws {
        var runs: [Run] = []
        for oneTransaction in [true, false] {
            let directory = ScratchDirectory("ot-erasure-chunks")
            var environment = ["OFFERTRACK_TEST_RENAME_ROWS_LEFT_AT_ANSWER": "0"]
            if oneTransaction { environment["OFFERTRACK_TEST_RENAME_IN_ONE_TRANSACTION"] = "1" }
            let daemon = try DaemonProcess(in: directory, environment: environment)
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
    /// answers the erasure once the rename is done (it answers only then here: `…_ROWS_LEFT_AT_ANSWER` 0), and
    /// says in its log why it waited.
    @Test func anIdleDaemonRetriesAFailedChunkAndAnswersTheErasure() throws {
        let directory = ScratchDirectory("ot-erasure-chunks-retry")
        let daemon = try DaemonProcess(
            in: directory,
            environment: [
                "OFFERTRACK_TEST_RENAME_ROWS_PER_CHUNK": "1000", "OFFERTRACK_TEST_RENAME_FAIL_CHUNKS": "3",
                "OFFERTRACK_TEST_RENAME_ROWS_LEFT_AT_ANSWER": "0",
            ])
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

    /// kill -9 between two chunks of the rename, after the erasure was answered (19,000 records left to rename,
    /// fewer than `RenameTuning.rowsLeftAtAnswer`): the start after it finishes the rename before `READY=1`,
    /// `verify` passes, and the erasure sent again is a duplicate with its seq.
    @Test func killedDuringTheChunksTheNextStartFinishesTheRename() throws {
        let directory = ScratchDirectory("ot-erasure-chunks-kill")
        var daemon = try DaemonProcess(
            in: directory,
            environment: [
                "OFFERTRACK_TEST_RENAME_ROWS_PER_CHUNK": "1000", "OFFERTRACK_TEST_RENAME_KILL_AFTER_CHUNK": "6",
            ])
        guard daemon.waitReady() else { return }
        let db = daemon.databasePath
        let person = "kill-person"
        try Self.journal(person, in: directory, daemon: daemon)
        let eraser = try LineClient(path: daemon.socketPath)
        try eraser.send(Self.erasure("e-kill", of: person) + "\n")
        // Answered after its batch; then killed by its hook after the sixth chunk (of nineteen).
        let answer = eraser.readLine()
        #expect(answer?.contains(#""status":"accepted""#) == true, "\(answer ?? "no answer")")
        #expect(eraser.readLine() == nil)
        _ = daemon.waitExit()
        let partial = try Self.counts(db, person)
        #expect(partial.named > 0 && partial.renamed > 0, "\(partial)")
        let unfinished = try CLI.run(["verify", "--db", db])
        #expect(unfinished.status != 0 && unfinished.output.contains("is unfinished"), "\(unfinished.output)")
        // A record the rename has not reached yet is explained as the person's under the new name already.
        let notYet = try Connection(path: db, mode: .readOnly).scalarText(
            "SELECT id FROM records WHERE user = '\(person)' ORDER BY seq DESC LIMIT 1")
        let explained = try CLI.run(["explain", "--db", db, "--id", notYet ?? "", "--format", "json"])
        #expect(explained.status == 0, "\(explained.output)")
        #expect(explained.output.contains(#""user":"erased:e-kill""#), "\(explained.output)")
        #expect(!explained.output.contains(person), "\(explained.output)")

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

    /// With no other client at all, the rename of a large person still runs chunk after chunk to its end: within
    /// SPEC 11's 60 s of the answer the person's id is in neither the database nor its WAL, and no other record
    /// was sent to move it on.
    ///
    /// The person's id is longer than the name (`erased:e9`), so that no renamed cell grows: a cell that grows can
    /// make SQLite rebuild a page, and its `rebuildPage` leaves the bytes of a neighbour not yet renamed in the
    /// page's unused space (`secure_delete` does not zero that space), which would fail this test for that other
    /// reason (noted in issue 47's branch report; `bench --only erasurebound` counts such copies).
    @Test func anIdleDaemonFinishesALargeRenameAndTheIdLeavesEveryFile() throws {
        let directory = ScratchDirectory("ot-erasure-chunks-idle")
        let daemon = try DaemonProcess(in: directory, environment: ["OFFERTRACK_TEST_RENAME_ROWS_PER_CHUNK": "1000"])
        guard daemon.waitReady() else { return }
        defer { DaemonProcess.terminateCleanly([daemon]) }
        let db = daemon.databasePath
        // Record ids of their own: an id is never renamed, so one holding the person's id would keep it stored.
        let (person, ids) = ("idle-large-person", "r")
        try Self.journal(person, ids: ids, in: directory, daemon: daemon)
        #expect(FileBytes.contain(db, person) || FileBytes.contain(db + "-wal", person))
        let eraser = try LineClient(path: daemon.socketPath, receiveTimeoutSeconds: 60)
        try eraser.send(Self.erasure("e9", of: person) + "\n")
        let answer = eraser.readLine()
        #expect(answer?.contains(#""status":"accepted""#) == true, "\(answer ?? "no answer")")
        // Nothing else is sent: the chunks alone must finish the rename, and the checkpoint after the last one
        // drop the WAL's older frames. SPEC 11's bound from the answer.
        let deadline = Date().addingTimeInterval(60)
        var inFiles = true
        while inFiles, Date() < deadline {
            inFiles = FileBytes.contain(db, person) || FileBytes.contain(db + "-wal", person)
            if inFiles { usleep(100_000) }
        }
        #expect(!inFiles, "\(person) still in the journal's files 60 s after the erasure's answer")
        #expect(try Self.counts(db, person, ids: ids) == (0, Int64(Self.records)))
        let journal = try Connection(path: db, mode: .readOnly)
        #expect(try journal.scalarInt("SELECT count(*) FROM pending_renames") == 0)
        #expect(daemon.stderr.contains("an erasure's rename is done"), "\(daemon.stderr)")
    }

    /// A person with more records left to rename than `RenameTuning.rowsLeftAtAnswer` (5,000 here, by its test
    /// switch): the erasure is answered only once the chunks got that far, so that what is left after the answer
    /// stays bounded whatever the person's history (SPEC 11's 60 s count from the answer).
    @Test func aLargerPersonsErasureIsAnsweredOnceFewEnoughRecordsAreLeft() throws {
        let directory = ScratchDirectory("ot-erasure-chunks-hold")
        let rowsLeft = 5_000
        let daemon = try DaemonProcess(
            in: directory,
            environment: [
                "OFFERTRACK_TEST_RENAME_ROWS_PER_CHUNK": "1000",
                "OFFERTRACK_TEST_RENAME_ROWS_LEFT_AT_ANSWER": "\(rowsLeft)",
            ])
        guard daemon.waitReady() else { return }
        defer { DaemonProcess.terminateCleanly([daemon]) }
        let db = daemon.databasePath
        let person = "held-person"
        try Self.journal(person, in: directory, daemon: daemon)
        let eraser = try LineClient(path: daemon.socketPath, receiveTimeoutSeconds: 60)
        try eraser.send(Self.erasure("e-held", of: person) + "\n")
        let answer = eraser.readLine()
        #expect(answer?.contains(#""status":"accepted""#) == true, "\(answer ?? "no answer")")
        // Read as soon as the answer came: at most the bound (and the last batch's few entries in the per-user
        // index's recent level, which the bound does not count) are still named so; answered after its batch,
        // 19,000 would be.
        let named = try Self.counts(db, person).named
        #expect(named <= Int64(rowsLeft + 1_000), "\(named) records still named \(person) at the answer")
        let deadline = Date().addingTimeInterval(60)
        while try Self.counts(db, person).named > 0, Date() < deadline { usleep(50_000) }
        #expect(try Self.counts(db, person) == (0, Int64(Self.records)))
    }
}
