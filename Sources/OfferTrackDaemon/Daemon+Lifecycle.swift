import JournalStore
import Metrics
import OfferTrackDomain
import Posix
import Systemd
import WireFormat

/// Signals: SIGTERM/SIGINT begin the drain, SIGHUP reloads the rules (and recomputes the derived tables when the
/// windows changed).
extension Daemon {
    func handleSignals(now: Int64) {
        for signal in signals.receive() {
            switch signal {
            case .terminate, .interrupt: beginShutdown(now: now)
            case .hangup: reloadRules(now: now)
            case .other: break
            }
        }
    }

    func beginShutdown(now: Int64) {
        guard !service.stopping else { return }
        service.stopping = true
        service.send("STOPPING=1\nSTATUS=stopping: finishing \(commits.count) queued records")
        log.notice("stopping: finishing what was read, answering the rest shutting_down")
        if let listener = connections.listener {
            try? watchListener(false)
            // A socket-activated listener stays with systemd; closing our copy only stops our accepting.
            FileDescriptor.close(listener)
            connections.listener = nil
        }
        service.drainDeadline = now + Int64(configuration.drainTimeoutSeconds) * 1000
        if recompute.isRunning {
            // Not worth waiting for: the next start recomputes the derived tables from scratch.
            pipeline.recomputes.abandon()
            recompute.abandon()
            log.notice("abandoning the recompute for new windows; the next start recomputes from scratch")
        }
        for connection in connections.all { settle(connection, now: now) }
    }

    func drainFinished(now: Int64) -> Bool {
        if now >= service.drainDeadline && !commits.isEmpty {
            let abandoned = commits.removeAll()
            metrics.reject(.shuttingDown, count: UInt64(abandoned.count))
            for job in abandoned {
                release(job)
                deliver(
                    .rejected(
                        id: job.submission.record.id,
                        RecordError(.shuttingDown, "the daemon is stopping; retry with the same id")),
                    to: job)
            }
            for connection in connections.all { settle(connection, now: now) }
        }
        // An erasure's rename (a few seconds at most) and its held answer are waited for until the deadline.
        let renamesAnswered = !pipeline.renames.isRenaming || now >= service.drainDeadline
        let journalIdle = commits.isEmpty && commits.writerBusySince == nil && renamesAnswered
        // Past the deadline (plus a grace period for unread answers) the remaining output is abandoned.
        return journalIdle && (connections.allFlushed || now >= service.drainDeadline + 2000)
    }

    func reloadRules(now: Int64) {
        service.send("RELOADING=1\nMONOTONIC_USEC=\(Clock.monotonicMicroseconds())")
        let previousSettings = rules.current.rules.settings
        switch rules.reload() {
        case .success(let summary):
            log.notice("rules reloaded: \(summary)")
            metrics.retentionDays.set(rules.current.rules.retentionDays ?? 0)
            let settings = rules.current.rules.settings
            pipeline.setSharedUsers(settings.sharedUsers)
            if settings != previousSettings && !configuration.journalOnly {
                // New windows change attribution itself: the writer recomputes the derived tables a chunk of
                // users at a time between batches, so records keep being acknowledged (and the watchdog fed);
                // readers see the old windows until the last chunk swaps the new tables in. READY=1 follows.
                let generation = recompute.start(now: now)
                log.info("recomputing the derived tables for the new windows; the daemon keeps serving")
                pipeline.recomputes.start(settings, generation: generation)
                return
            }
        case .failure(let error):
            log.warning("rules reload failed, keeping the previous rules: \(error)")
        }
        // With a recompute for new windows still running, READY=1 comes when it finishes.
        if recompute.isRunning { return }
        service.ready(statusLine())
    }

    /// The writer finished recomputing the derived tables for a reload: the reload is complete.
    func finishRecompute(_ outcome: RecomputeOutcome, now: Int64) {
        guard let startedAt = recompute.finish(generation: outcome.generation) else { return }
        let took = now - startedAt
        switch outcome.result {
        case .success: log.info("derived tables recomputed for the new windows in \(took) ms")
        case .failure(let failure):
            log.warning("recomputing derived tables failed (they are rebuilt at the next start): \(failure.message)")
        }
        service.ready(statusLine())
    }
}
