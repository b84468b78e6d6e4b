import JournalStore
import Metrics
import OfferTrackDomain
import Posix
import Synchronization
import WireFormat

/// The event loop's side of the group commit: batches handed to the writer (`CommitQueue`, `CommitPipeline`),
/// its results answered in each connection's order, refusals while the journal fails.
extension Daemon {
    func dispatchBatchIfIdle(now: Int64) {
        guard commits.writerBusySince == nil, !commits.isEmpty else { return }
        if journal.isCorrupt {
            // Not retried as if transient: refused without touching the journal again.
            refuseWaiting(now: now)
            return
        }
        guard let batch = commits.takeBatch(now: now) else { return }
        pipeline.submit(batch)
    }

    func handleCommitResults(now: Int64) {
        let results = pipeline.takeResults()
        for outcome in pipeline.recomputes.takeOutcomes() { finishRecompute(outcome, now: now) }
        for commit in pipeline.stream.take() { noteStreamCommit(commit) }
        for result in results {
            if result.finishesBatch { commits.batchFinished() }
            switch result.outcomes {
            case .success(let outcomes):
                noteJournalCommitted()
                let answeredAt = Clock.monotonicMicroseconds()
                for (job, outcome) in zip(result.jobs, outcomes) {
                    deliver(response(for: job, outcome), to: job)
                    metrics.ackLatency.observe(answeredAt &- job.readAtMicroseconds)
                }
            case .failure(let failure):
                noteJournalFailure(failure)
                counters.storageUnavailable += result.jobs.count
                metrics.reject(.storageUnavailable, count: UInt64(result.jobs.count))
                for job in result.jobs { refuse(job) }
            }
            for job in result.jobs { release(job) }
            for token in Set(result.jobs.map(\.connection)) {
                if let connection = connections[token] { settle(connection, now: now) }
            }
        }
        resumeQueuePausedConnections(now: now)
        dispatchBatchIfIdle(now: now)
    }

    /// A batch (or a stream commit) did not commit: a corrupt journal stops all acknowledging (and commits from
    /// the stream), anything else is shown until a commit succeeds.
    func noteJournalFailure(_ failure: JournalFailure) {
        metrics.storageFailures.increment()
        let news = journal.failed(failure)
        guard failure.isCorruption else {
            if news { log.error("the journal cannot commit: \(failure.message)") }
            return
        }
        if news {
            counters.corruptionsDetected += 1
            log.error(
                "JOURNAL CORRUPT: \(failure.message); nothing more is acknowledged. Stop offertrackd, "
                    + "restore the latest backup (docs/operating.md, \"Backups\") and start it again")
        }
        pipeline.stream.refusing.withLock { $0 = failure }
        metrics.journalCorrupt.set(1)
        service.send("STATUS=\(statusLine())")
    }

    /// A commit of records from the stream: counted as a batch's are, its failure handled as a batch's.
    func noteStreamCommit(_ commit: StreamCommit) {
        switch commit.outcomes {
        case .success(let outcomes):
            noteJournalCommitted()
            for case .accepted(let seq) in outcomes { counters.lastSeq = max(counters.lastSeq, seq) }
            metrics.lastSeq.set(counters.lastSeq)
        case .failure(let failure):
            noteJournalFailure(failure)
        }
    }

    /// A batch (or a stream commit) committed: a failure shown ends.
    func noteJournalCommitted() {
        guard let failure = journal.committed() else { return }
        log.notice("the journal commits again (after: \(failure))")
    }

    /// Answers `storage_unavailable` to one job that was not committed.
    func refuse(_ job: CommitJob) {
        deliver(
            .rejected(
                id: job.submission.record.id,
                RecordError(.storageUnavailable, "the journal cannot commit now; retry with the same id")),
            to: job)
    }

    /// Refuses every waiting record (the journal is corrupt) and settles their connections.
    func refuseWaiting(now: Int64) {
        let refused = commits.removeAll()
        counters.storageUnavailable += refused.count
        metrics.reject(.storageUnavailable, count: UInt64(refused.count))
        for job in refused {
            refuse(job)
            release(job)
        }
        for token in Set(refused.map(\.connection)) {
            if let connection = connections[token] { settle(connection, now: now) }
        }
        resumeQueuePausedConnections(now: now)
    }

    func response(for job: CommitJob, _ outcome: AppendOutcome) -> ResponseLine {
        let id = job.submission.record.id
        switch outcome {
        case .accepted(let seq):
            counters.accepted += 1
            counters.lastSeq = max(counters.lastSeq, seq)
            metrics.accepted.increment()
            metrics.lastSeq.set(counters.lastSeq)
            return .accepted(id: id, seq: seq)
        case .duplicate(let seq):
            counters.duplicates += 1
            metrics.duplicates.increment()
            return .duplicate(id: id, seq: seq)
        case .conflict:
            counters.rejected += 1
            metrics.reject(.idConflict)
            return .rejected(
                id: id, RecordError(.idConflict, "a record with id \(id) is journaled already with other content"))
        case .expired(let horizon):
            counters.rejected += 1
            metrics.reject(.expired)
            return .rejected(
                id: id,
                RecordError(
                    .expired,
                    "ts is before the journal's acceptance horizon \(Timestamp.format(horizon)): its day, or a "
                        + "window that reads it, is sealed"))
        }
    }

    func deliver(_ response: ResponseLine, to job: CommitJob) {
        connections[job.connection]?.answer(slot: job.slot, with: response)
    }

    /// A job left the queue: its bytes no longer count against the queue budget.
    func release(_ job: CommitJob) {
        commits.release(job)
    }

    /// Reads again the connections held back by the answer budget once it is half free.
    func resumeAnswerPausedConnections() {
        guard !connections.pausedForAnswers.isEmpty, connections.answers.bytes < connections.answers.limit / 2 else {
            return
        }
        let tokens = connections.pausedForAnswers
        connections.pausedForAnswers.removeAll()
        for token in tokens {
            if let connection = connections[token] { updateInterest(connection) }
        }
    }

    func resumeQueuePausedConnections(now: Int64) {
        for token in commits.takeResumable() {
            if let connection = connections[token] { updateInterest(connection) }
        }
    }
}
