import Fleet
import Posix
import Synchronization
import Systemd

/// Once a turn: accepting resumed after a pause, the watchdog (not while the writer is stuck), `STATUS=` when it
/// changed, lingering refused peers and idle connections closed.
extension Daemon {
    func housekeeping(now: Int64) {
        if let until = connections.acceptPausedUntil, now >= until {
            connections.acceptPausedUntil = nil
            if !service.stopping && connections.count < configuration.maxConnections { resumeAccepting() }
        }
        if let interval = service.watchdogIntervalMilliseconds, now - service.lastWatchdogPing >= interval / 2 {
            let streamCommitSince = pipeline.stream.startedAt.load(ordering: .relaxed)
            let writerStuck =
                (commits.writerBusySince.map { now - $0 > interval / 2 } ?? false)
                || (streamCommitSince > 0 && now - streamCommitSince > interval / 2)
            if !writerStuck {
                service.send("WATCHDOG=1")
                service.lastWatchdogPing = now
            }
        }
        if now - service.lastStatusAt >= 1000 {
            service.lastStatusAt = now
            let status = statusLine()
            if status != service.lastStatus {
                service.send("STATUS=\(status)")
                service.lastStatus = status
            }
        }
        connections.refused.closeExpired(now: now)
        if now - connections.lastIdleSweep >= 1000 {
            connections.lastIdleSweep = now
            let limit = Int64(configuration.idleTimeoutSeconds) * 1000
            for connection in connections.idle(longerThan: limit) { close(connection) }
        }
    }

    func statusLine() -> String {
        var line =
            "\(service.stopping ? "stopping" : "serving"): \(connections.count) connections; "
            + "\(counters.accepted) accepted, \(counters.duplicates) duplicate, \(counters.rejected) rejected "
            + "since start; last seq \(counters.lastSeq)"
        line += journal.statusPart(detections: counters.corruptionsDetected)
        let checkpoints = pipeline.checkpoints.health.withLock { $0 }
        if let failing = checkpoints.failing {
            line += "; CHECKPOINT FAILING (\(checkpoints.failures) failures since start, backing off): \(failing)"
        } else if checkpoints.failures > 0 {
            line += "; \(checkpoints.failures) checkpoint failures since start"
        }
        line += fleet.statusPart
        if let error = rules.lastError { line += "; RULES RELOAD FAILED (old rules kept): \(error)" }
        if recompute.isRunning {
            let users = pipeline.recomputes.recomputedUsers.load(ordering: .relaxed)
            line += "; recomputing the derived tables for new windows (\(users) users so far)"
        }
        return line.replacingNewlines()
    }
}

extension String {
    /// The string on one line (newlines would split a `STATUS=` notification).
    func replacingNewlines() -> String {
        String(map { $0.isNewline ? " " : $0 })
    }
}
