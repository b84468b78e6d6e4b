import JournalStore
import OfferTrackDomain
import Synchronization
import Testing
import WireFormat

@testable import OfferTrackDaemon

/// The group commit's policy without a journal: batch caps, fairness across connections (a newcomer's line goes
/// into the next batch), one batch with the writer at a time, cost accounting and holding readers back.
@Suite struct CommitQueueTests {
    static let line = Array(
        #"{"type":"capabilities","id":"c-1","ts":"2026-11-28T10:00:00Z","user":"u","authorization":3,"capabilities":2}"#
            .utf8)
    static let submission: Submission = {
        guard case .valid(let record) = RecordValidator.validate(line) else { preconditionFailure("invalid line") }
        return Submission(record: record, line: line)
    }()

    static func job(_ connection: UInt64, _ slot: UInt64) -> CommitJob {
        CommitJob(connection: connection, slot: slot, submission: submission, readAtMicroseconds: 0)
    }

    /// `counts[i]` jobs from connection `i + 1`, appended connection after connection.
    static func queue(_ counts: [Int], limits: CommitQueue.Limits) -> CommitQueue {
        var queue = CommitQueue(limits: limits)
        for (index, count) in counts.enumerated() {
            for slot in 0..<count { queue.append(job(UInt64(index + 1), UInt64(slot))) }
        }
        return queue
    }

    static let small = CommitQueue.Limits(maxBatch: 16, batchQuantum: 8, maxQueuedBytes: 1 << 30)

    /// (jobs waiting per connection, jobs of each connection in the first batch)
    static let firstBatches: [([Int], [Int])] = [
        ([100], [16]),  // alone: maxBatch, not held to the quantum (nor given more)
        ([10], [10]),
        ([100, 1], [8, 1]),  // a newcomer's line goes into the next batch
        ([100, 100], [8, 8]),  // two waiting: a quantum each
        ([100, 100, 100, 100], [4, 4, 4, 4]),  // the quantum shrinks so that one pass reaches every connection
        ([3, 100, 2], [3, 5, 2]),  // three waiting: a quantum of 16 / 3
    ]

    @Test(arguments: firstBatches)
    func aBatchIsOneRoundRobinPassWithinTheCaps(waiting: [Int], expected: [Int]) throws {
        var queue = Self.queue(waiting, limits: Self.small)
        let taken = queue.takeBatch(now: 0)
        let batch = try #require(taken)
        let perConnection = (1...waiting.count).map { connection in
            batch.count { $0.connection == UInt64(connection) }
        }
        #expect(perConnection == expected)
        #expect(queue.inFlight == batch.count)
        #expect(queue.count == waiting.reduce(0, +) - batch.count)
        #expect(queue.backlog.value.load(ordering: .relaxed) == queue.count)
    }

    @Test func eachConnectionsJobsLeaveInTheOrderTheyCame() throws {
        var queue = Self.queue([20, 20], limits: Self.small)
        var slots: [UInt64: [UInt64]] = [:]
        while let batch = queue.takeBatch(now: 0) {
            for job in batch { slots[job.connection, default: []].append(job.slot) }
            queue.batchFinished()
        }
        #expect(slots[1] == Array(0..<20))
        #expect(slots[2] == Array(0..<20))
    }

    @Test func theWriterHasOneBatchAtATime() throws {
        var queue = Self.queue([20], limits: Self.small)
        #expect(queue.writerBusySince == nil)
        let first = queue.takeBatch(now: 5)
        _ = try #require(first)
        #expect(queue.writerBusySince == 5)
        let second = queue.takeBatch(now: 6)
        #expect(second == nil)
        queue.batchFinished()
        #expect(queue.writerBusySince == nil && queue.inFlight == 0)
        let next = queue.takeBatch(now: 10)
        #expect(next?.count == 4)  // 20 − the first 16
        queue.batchFinished()
        let none = queue.takeBatch(now: 11)
        #expect(none == nil)  // nothing waits
    }

    @Test func costsAreCountedInAndOutPerConnection() throws {
        let cost = CommitQueue.cost(of: Self.line)
        #expect(cost == Self.line.count + 750)
        var queue = Self.queue([3, 2], limits: Self.small)
        #expect(queue.queuedBytes == 5 * cost)
        #expect(queue.queuedBytes(of: 1) == 3 * cost && queue.queuedBytes(of: 2) == 2 * cost)
        // Taken by the writer, a batch still counts until its answers are out.
        let taken = queue.takeBatch(now: 0)
        let batch = try #require(taken)
        #expect(queue.queuedBytes == 5 * cost)
        for job in batch { queue.release(job) }
        queue.batchFinished()
        #expect(queue.queuedBytes == 0 && queue.queuedBytes(of: 1) == 0 && queue.queuedBytes(of: 2) == 0)
    }

    @Test func removeAllTakesEveryWaitingJob() {
        var queue = Self.queue([3, 4], limits: Self.small)
        let all = queue.removeAll()
        #expect(all.count == 7 && queue.isEmpty && queue.count == 0)
        #expect(queue.backlog.value.load(ordering: .relaxed) == 0)
        for job in all { queue.release(job) }
        #expect(queue.queuedBytes == 0)
    }

    @Test func overTheCapOnlyConnectionsWithRecordsQueuedAreHeldBackUntilBelowHalf() throws {
        let cost = CommitQueue.cost(of: Self.line)
        let limits = CommitQueue.Limits(maxBatch: 16, batchQuantum: 8, maxQueuedBytes: 10 * cost)
        var queue = Self.queue([9], limits: limits)
        let heldUnder = queue.mustHoldBack(1)
        #expect(!heldUnder)  // under the cap
        queue.append(Self.job(1, 9))
        let heldAtCap = queue.mustHoldBack(1)
        #expect(heldAtCap)  // at the cap, with records queued
        let newcomerHeld = queue.mustHoldBack(2)
        #expect(!newcomerHeld)  // a newcomer still gets its line in
        let early = queue.takeResumable()
        #expect(early.isEmpty)  // not below half yet
        let taken = queue.takeBatch(now: 0)
        let batch = try #require(taken)
        for job in batch.prefix(5) { queue.release(job) }
        let atHalf = queue.takeResumable()
        #expect(atHalf.isEmpty)  // exactly half: still held
        queue.release(batch[5])
        let belowHalf = queue.takeResumable()
        #expect(belowHalf == [1])
        let again = queue.takeResumable()
        #expect(again.isEmpty)  // handed out once
    }

    @Test func aClosedConnectionIsNotResumed() {
        let cost = CommitQueue.cost(of: Self.line)
        let limits = CommitQueue.Limits(maxBatch: 16, batchQuantum: 8, maxQueuedBytes: cost)
        var queue = Self.queue([1], limits: limits)
        let held = queue.mustHoldBack(1)
        #expect(held)
        queue.forget(1)
        for job in queue.removeAll() { queue.release(job) }
        let resumable = queue.takeResumable()
        #expect(resumable.isEmpty)
    }

    /// Taken jobs hold their records and lines, which no queue limit counts: they must not pile up behind
    /// connections that keep pipelining (64 such clients once held ~100 MiB of committed records).
    @Test(arguments: [1, 2, 8, 64])
    func takenJobsAreDroppedWhileConnectionsKeepPipelining(connections: Int) {
        var queue = FairQueue()
        var slot: UInt64 = 0
        var worst = (taken: 0, waiting: 0)
        for _ in 0..<200 {
            // Each connection sends a little more than a batch takes from it.
            for connection in 1...connections {
                for _ in 0..<40 {
                    queue.append(Self.job(UInt64(connection), slot))
                    slot += 1
                }
            }
            while queue.count > connections * 200 { _ = queue.takeBatch(limit: 2048, quantum: 1024) }
            let taken = queue.heldJobs - queue.count
            if taken - max(queue.count, 32 * connections) > worst.taken - max(worst.waiting, 32 * connections) {
                worst = (taken, queue.count)
            }
        }
        #expect(
            worst.taken <= max(worst.waiting, 32 * connections),
            "\(worst.taken) taken jobs held beside \(worst.waiting) waiting")
    }
}
