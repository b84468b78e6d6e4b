import Dispatch
import JournalStore
import NATS
import OfferTrackDomain
import Posix
import Synchronization
import WireFormat

extension CentralConsumer {
    func report(_ progress: Progress) -> StreamReport {
        StreamReport(
            problem: health.state.problem, invalid: progress.invalid, conflicts: progress.conflicts,
            wrongPartition: progress.wrongPartition, expired: progress.expired)
    }

    /// Where one message's valid records are among a `consume`'s submissions: `start..<end` (empty when it
    /// carried none).
    struct MessageRecords {
        let start: Int
        let end: Int
    }

    /// Commits the fetched batches' records, at most `commitRecords` a commit, and hands each batch's messages
    /// back to its fetcher to acknowledge once the last commit holding their records is done; false when a commit
    /// failed (the messages whose records were all committed, or that carried none to commit, are acknowledged
    /// then; the others are delivered again).
    func consume(_ batches: [FetchedBatch]) -> Bool {
        var submissions: [Submission] = []
        var refused = (invalid: 0, wrongPartition: 0)
        let records = batches.map { batch in
            zip(batch.messages, batch.payloads).map { message, payload in
                let start = submissions.count
                submissions += validRecords(of: message, payload, refused: &refused)
                return MessageRecords(start: start, end: submissions.count)
            }
        }
        state.withLock {
            $0.invalid += refused.invalid
            $0.wrongPartition += refused.wrongPartition
        }
        var open = Array(batches.indices)
        /// Hands back the batches whose messages are all acknowledgeable once `committed` records are.
        func handBack(committed: Int) {
            open.removeAll { index in
                guard records[index].allSatisfy({ $0.end <= committed }) else { return false }
                batches[index].fetcher.finished(acknowledging: batches[index].messages)
                return true
            }
        }
        handBack(committed: 0)
        var committed = 0
        for commitEnd in Self.commitEnds(records.joined().map(\.end), limit: commitRecords) {
            let chunk = Array(submissions[committed..<commitEnd])
            let outcomes: [AppendOutcome]
            do {
                outcomes = try commit(chunk)
            } catch {
                log.error(
                    "committing \(chunk.count) records from the stream failed (they will be delivered again): "
                        + "\(error)")
                for index in open {
                    let done = zip(batches[index].messages, records[index]).filter {
                        $0.1.end <= committed || $0.1.start == $0.1.end
                    }
                    batches[index].fetcher.finished(acknowledging: done.map(\.0))
                }
                return false
            }
            count(outcomes, of: chunk)
            committed = commitEnd
            handBack(committed: committed)
        }
        return true
    }

    /// Where commits of at most `limit` records end, given where each message's records end (ascending, the
    /// last the total): a commit holds whole messages while they fit, and a message larger than `limit` is
    /// split over commits of its own.
    static func commitEnds(_ messageEnds: [Int], limit: Int) -> [Int] {
        var ends: [Int] = []
        var start = 0
        var end = 0
        for messageEnd in messageEnds where messageEnd > end {
            if messageEnd - start > limit, end > start {
                ends.append(end)
                start = end
            }
            while messageEnd - start > limit {
                start += limit
                ends.append(start)
            }
            end = messageEnd
        }
        if end > start { ends.append(end) }
        return ends
    }

    /// The records `payload` carries that this journal takes; a line that is not a valid record, or a record of
    /// another partition, counted in `refused` and logged.
    func validRecords(
        of message: NATSMessage, _ payload: [UInt8], refused: inout (invalid: Int, wrongPartition: Int)
    ) -> [Submission] {
        let lines = StreamBatch.lines(of: payload)
        var valid: [Submission] = []
        valid.reserveCapacity(lines.count)
        let shared = sharedUsers()
        let origin = StreamPartition.of(subject: message.subject, total: stream.partitionsTotal)
        for (number, line) in lines.enumerated() {
            guard case .valid(let record) = RecordValidator.validate(line, sharedUsers: shared) else {
                refused.invalid += 1
                logRefusal(
                    "line \(number + 1) of \(lines.count) of stream message \(message.header("Nats-Msg-Id") ?? "?") "
                        + "on \(message.subject) is not a valid record; dropped")
                continue
            }
            // A forgotten person's record keeps their partition, not its name's (SPEC 11): taken on any subject
            // of this journal's partitions, which are the only ones it consumes.
            let partition = Partition.of(user: record.user, total: stream.partitionsTotal)
            guard partitions.contains(partition) || record.user.utf8.starts(with: Erasure.namePrefix.utf8) else {
                refused.wrongPartition += 1
                logRefusal(
                    "record \(record.id) on \(message.subject) belongs to partition \(partition) of "
                        + "\(stream.partitionsTotal), not to this journal's "
                        + "\(partitions.map(String.init).joined(separator: ",")); refused, not journaled (an edge "
                        + "with another --partitions-total, or a publisher other than an edge)")
                continue
            }
            valid.append(Submission(record: record, line: line, partition: origin))
        }
        return valid
    }

    /// Counts a commit's outcomes; conflicts are logged.
    func count(_ outcomes: [AppendOutcome], of submissions: [Submission]) {
        var counts = (accepted: 0, duplicates: 0, conflicts: 0, expired: 0)
        for (index, outcome) in outcomes.enumerated() {
            switch outcome {
            case .accepted: counts.accepted += 1
            case .duplicate: counts.duplicates += 1
            case .conflict:
                counts.conflicts += 1
                logRefusal(
                    "record \(submissions[index].record.id) from the stream conflicts with the journaled one; kept")
            case .expired(let horizon):
                counts.expired += 1
                logRefusal(
                    "record \(submissions[index].record.id) from the stream is before this journal's acceptance "
                        + "horizon \(Timestamp.format(horizon)) (its day is sealed, SPEC 12); acknowledged, not "
                        + "journaled")
            }
        }
        state.withLock {
            $0.accepted += counts.accepted
            $0.duplicates += counts.duplicates
            $0.conflicts += counts.conflicts
            $0.expired += counts.expired
        }
    }

    /// Logs a refused message: the first, then at most one line every 10 s with how many were not logged.
    func logRefusal(_ line: String) {
        let now = Clock.monotonicMilliseconds()
        let unlogged: Int? = refusalLog.withLock { last in
            guard now - last.at >= 10_000 else {
                last.unlogged += 1
                return nil
            }
            defer { last = (now, 0) }
            return last.unlogged
        }
        guard let unlogged else { return }
        log.warning(line + (unlogged > 0 ? " (\(unlogged) more refused since the last line)" : ""))
    }
}
