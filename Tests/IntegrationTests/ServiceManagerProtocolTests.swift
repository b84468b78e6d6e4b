import Foundation
import Posix
import SQLite
import TestSupport
import Testing

/// sd_notify behaviour (SPEC section 8) against the real binary with a real NOTIFY_SOCKET listener.
@Suite struct ServiceManagerProtocolTests {
    @Test func readyComesOnlyOnceTheSocketListensAndCarriesAStatus() throws {
        let directory = ScratchDirectory()
        let daemon = try DaemonProcess(in: directory)
        guard daemon.waitReady() else { return }
        // READY=1 was sent: the socket must accept at once, and the journal must exist.
        let client = try LineClient(path: daemon.socketPath)
        let answers = client.exchange([TestRecords.capabilities(id: "ready-1")])
        #expect(answers.map(\.status) == ["accepted"])
        let ready = try #require(daemon.notify.waitFor(line: "READY=1"))
        #expect(ready.contains("STATUS="))
        #expect(FileManager.default.fileExists(atPath: daemon.databasePath))
    }

    @Test func statusLineReportsWhatWasAccepted() throws {
        let directory = ScratchDirectory()
        let daemon = try DaemonProcess(in: directory)
        guard daemon.waitReady() else { return }
        let client = try LineClient(path: daemon.socketPath)
        _ = client.exchange([TestRecords.capabilities(id: "s-1"), TestRecords.capabilities(id: "s-2")])
        let status = daemon.notify.waitFor(timeout: 5) { $0.hasPrefix("STATUS=") && $0.contains("2 accepted") }
        #expect(status != nil, "no STATUS= with the accepted count; got \(daemon.notify.messages)")
    }

    /// With `WATCHDOG_USEC=1000000` the pings come every half second, rounded up to the idle event loop's next
    /// turn (250 ms): no gap longer than 0.75 s plus twice how late this machine woke a thread sleeping 250 ms in
    /// the same seconds (the baseline). A daemon pinging at the full interval leaves gaps of 1 s or more.
    @Test func watchdogIsPingedAtHalfTheInterval() throws {
        let directory = ScratchDirectory()
        let daemon = try DaemonProcess(in: directory, environment: ["WATCHDOG_USEC": "1000000"])
        guard daemon.waitReady() else { return }
        let measuring = WakeupLateness()
        let start = Date()
        while daemon.notify.arrivals(of: "WATCHDOG=1").count < 7, Date().timeIntervalSince(start) < 10 {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let lateness = measuring.stop()
        let pings = daemon.notify.arrivals(of: "WATCHDOG=1")
        let gaps = zip(pings.dropFirst(), pings).map { $0 - $1 }
        try #require(gaps.count >= 6, "\(pings.count) WATCHDOG=1 in 10 s")
        let longest = gaps.max() ?? .infinity
        let bound = 0.5 + 0.25 + 2 * lateness
        print(
            "watchdog: gaps \(gaps.map { Int($0 * 1000) }) ms; bound \(Int(bound * 1000)) ms (lateness \(lateness) s)")
        #expect(longest <= bound, "a gap of \(longest) s between pings (bound \(bound) s)")
    }

    @Test func noWatchdogPingsWithoutWatchdogUsec() throws {
        let directory = ScratchDirectory()
        let daemon = try DaemonProcess(in: directory)
        guard daemon.waitReady() else { return }
        #expect(daemon.notify.waitFor(line: "WATCHDOG=1", timeout: 1.5) == nil)
    }

    @Test func sighupReloadsWithMonotonicTimestampThenReady() throws {
        let directory = ScratchDirectory()
        let daemon = try DaemonProcess(in: directory)
        guard daemon.waitReady() else { return }
        daemon.notify.reset()
        let before = Clock.monotonicMicroseconds()
        daemon.signal(Signals.hangup)
        let reloading = try #require(daemon.notify.waitFor(line: "RELOADING=1"))
        let monotonic = reloading.split(separator: "\n").first { $0.hasPrefix("MONOTONIC_USEC=") }
        let value = try #require(monotonic.flatMap { UInt64($0.dropFirst("MONOTONIC_USEC=".count)) })
        #expect(value >= before && value <= Clock.monotonicMicroseconds())
        #expect(daemon.notify.waitFor(line: "READY=1") != nil)
        // Still serving after the reload.
        let client = try LineClient(path: daemon.socketPath)
        #expect(client.exchange([TestRecords.capabilities(id: "after-hup")]).map(\.status) == ["accepted"])
    }

    @Test func sigtermAnswersEveryLineItReadAndExitsZero() throws {
        let directory = ScratchDirectory()
        let metrics = directory.file("metrics.sock")
        let daemon = try DaemonProcess(
            in: directory, arguments: ["--drain-timeout", "1", "--metrics-listen", metrics])
        guard daemon.waitReady() else { return }
        let lines = TestRecords.stream(prefix: "term", count: 20000)
        let client = try LineClient(path: daemon.socketPath)
        // Some records acknowledged first; then the journal's write lock held, so that the drain cannot finish what
        // is queued before its 1 s deadline, and the rest sent behind it.
        var answers = client.exchange(Array(lines.prefix(100)))
        let holder = try Connection(path: daemon.databasePath, mode: .readWrite)
        holder.setBusyTimeout(milliseconds: 10_000)
        try holder.execute("BEGIN IMMEDIATE")
        let payload = Array(lines.dropFirst(100).map { $0 + "\n" }.joined().utf8)
        let fd = client.fd
        let writer = Thread { try? FileDescriptor.writeAll(fd, payload) }
        writer.start()
        // A connection has at most 4,096 records unanswered, and the batch the held lock stops may hold them all;
        // so once this one's are read (the daemon's own gauge), a second connection's lines are read too: they
        // cannot be in that batch, and the deadline always finds records to answer shutting_down.
        let window = 4096  // `Daemon.maxUnansweredPerConnection`
        func queuedRecords() -> Double {
            MetricsScrape.metric("offertrack_queued_records", at: metrics).flatMap { Double($0) } ?? 0
        }
        try #require(
            eventually(60) { queuedRecords() >= Double(window) },
            "the first connection's records never filled its window")
        let late = TestRecords.stream(prefix: "term-late", count: 100)
        let second = try LineClient(path: daemon.socketPath)
        try second.send(lines: late)
        try #require(
            eventually(60) {
                queuedRecords() >= Double(window + late.count)
            }, "the second connection's records were never read")
        daemon.signal(Signals.terminate)
        while let answer = client.readAnswer() { answers.append(answer) }
        let lateAnswers = second.readAnswers(late.count)
        holder.rollbackIfActive()
        #expect(daemon.notify.waitFor(line: "STOPPING=1") != nil)
        #expect(daemon.waitExit() == 0)
        #expect(answers.count >= 100 && answers.count <= lines.count)
        // Answers come in input order, one per line read: accepted, or not journaled and retryable (the batch
        // the lock held up is storage_unavailable, what was still queued at the deadline shutting_down).
        for (index, answer) in answers.enumerated() {
            #expect(answer.id == "term-\(index)")
            #expect(
                answer.status == "accepted" || answer.code == "shutting_down" || answer.code == "storage_unavailable",
                "\(answer)")
        }
        #expect(lateAnswers.map(\.id) == late.indices.map { "term-late-\($0)" })
        for answer in lateAnswers {
            #expect(answer.code == "shutting_down" || answer.code == "storage_unavailable", "\(answer)")
        }
        let shuttingDown = (answers + lateAnswers).filter { $0.code == "shutting_down" }
        #expect(!shuttingDown.isEmpty, "no record was answered shutting_down: the drain deadline was not tested")
        let journal = try JournalInspector(path: daemon.databasePath).seqByID()
        for answer in answers where answer.status == "accepted" {
            #expect(journal[answer.id ?? ""] == answer.seq)
        }
        for answer in answers + lateAnswers where answer.status == "rejected" {
            #expect(journal[answer.id ?? ""] == nil, "\(answer) but journaled")
        }
    }
}
