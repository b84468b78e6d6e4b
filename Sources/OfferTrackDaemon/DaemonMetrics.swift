import Metrics
import OfferTrackDomain
import Posix

/// The daemon's metrics (SPEC section 8), updated by the event loop and the writer with relaxed atomics, read by
/// the metrics server's thread when it is scraped.
final class DaemonMetrics: Sendable {
    let accepted = Counter()
    let duplicates = Counter()
    let rejected = Counter()
    private let rejectionsByCode: [ErrorCode: Counter]
    let connections = Gauge()
    let queuedRecords = Gauge()
    let lastSeq = Gauge()
    let storageFailures = Counter()
    /// 1 once SQLite found the journal damaged (nothing is acknowledged until a restore and restart).
    let journalCorrupt = Gauge()
    /// The rules' `retentionDays` (SPEC 12), 0 without one; set at start and on every reload.
    let retentionDays = Gauge()
    /// Seconds a batch's transaction took, in microseconds: about 0.3 ms for a small batch on this disk, 10–50 ms
    /// for a full one (2,048 records).
    let commitSeconds = Histogram(bounds: latencyBoundsMicroseconds, scale: 1_000_000)
    /// Of each commit, its `COMMIT` alone, in microseconds: the batch's WAL frames written and synced.
    let commitStatementSeconds = Histogram(bounds: latencyBoundsMicroseconds, scale: 1_000_000)
    /// Each pause of the writer after a commit for a checkpoint (the WAL's limit, an erasure's old frames), in
    /// microseconds: at most `CheckpointThread.writerWaitMilliseconds`.
    let writerPauseSeconds = Histogram(bounds: latencyBoundsMicroseconds, scale: 1_000_000)
    /// The writer's `JoinCounts`, set after each commit.
    let joinFromSummary = Counter()
    let joinLateChecks = Counter()
    let joinRefreshed = Counter()
    let commitRecords = Histogram(bounds: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192])
    /// The most records of one user in a commit (a hot user: rule 4.0's placeholders, test devices).
    let commitLargestUserRecords = Histogram(bounds: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192])
    /// From a line's framing to its answer being queued for the client, in microseconds (p99 ~4 ms at
    /// 10,000 records/s here).
    let ackLatency = Histogram(bounds: latencyBoundsMicroseconds, scale: 1_000_000)
    /// When this process started, in whole seconds since the epoch: a change means the daemon restarted.
    let startTimeSeconds = Clock.wallMilliseconds() / 1000

    /// 100 µs to 10 s, about doubling.
    static let latencyBoundsMicroseconds: [UInt64] = [
        100, 250, 500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 512_000, 1_000_000,
        2_000_000, 5_000_000, 10_000_000,
    ]

    init() {
        var byCode: [ErrorCode: Counter] = [:]
        for code in ErrorCode.allCases { byCode[code] = Counter() }
        rejectionsByCode = byCode
    }

    /// Counts one rejected answer with its code.
    func reject(_ code: ErrorCode, count: UInt64 = 1) {
        rejected.increment(by: count)
        rejectionsByCode[code]?.increment(by: count)
    }

    /// The exposition, with the journal's size on disk and its seal state (SPEC 12) read now.
    func render(
        journalBytes: Int64, checkpoints: CheckpointHealth = CheckpointHealth(), fleet: FleetMetrics? = nil,
        sealed: (lastSealedDay: Int64, horizon: Int64)? = nil
    ) -> String {
        var out = Exposition()
        out.gauge(
            "offertrack_start_time_seconds", help: "When the daemon started, in seconds since the Unix epoch.",
            startTimeSeconds)
        out.counter(
            "offertrack_records_total", help: "Answered record lines by status.", label: "status",
            [("accepted", accepted.current), ("duplicate", duplicates.current), ("rejected", rejected.current)])
        out.counter(
            "offertrack_rejections_total", help: "Rejected lines by error code (SPEC section 2).", label: "code",
            ErrorCode.allCases.map { ($0.rawValue, rejectionsByCode[$0]?.current ?? 0) })
        out.counter(
            "offertrack_storage_failures_total", help: "Batches whose commit failed (answered storage_unavailable).",
            [("", storageFailures.current)])
        out.counter(
            "offertrack_checkpoint_failures_total", help: "WAL checkpoints that failed (disk full, I/O error).",
            [("", UInt64(checkpoints.failures))])
        out.counter(
            "offertrack_checkpoint_blocking_total",
            help: "Checkpoints that started the WAL over after it reached its limit (the writer paused for them).",
            [("", UInt64(checkpoints.blocking))])
        out.counter(
            "offertrack_checkpoint_writer_pauses_total",
            help: "Times the writer paused after a commit for a checkpoint (the WAL's limit, an erasure's frames).",
            [("", UInt64(checkpoints.writerPauses))])
        out.counter(
            "offertrack_checkpoint_writer_pause_seconds_total",
            help: "How long the writer paused for checkpoints in all; records waiting for a commit waited as long.",
            UInt64(max(0, checkpoints.writerPauseMilliseconds)), scale: 1000)
        out.counter(
            "offertrack_checkpoint_erasure_truncates_total",
            help: "Times the WAL file was emptied for erasures' old frames (erasures close together share one).",
            [("", UInt64(checkpoints.erasureTruncates))])
        out.gauge(
            "offertrack_journal_corrupt", help: "1 when the journal was found damaged: nothing is acknowledged.",
            journalCorrupt.current)
        out.gauge("offertrack_connections", help: "Client connections open.", connections.current)
        out.gauge(
            "offertrack_queued_records", help: "Records read and waiting for the journal writer.", queuedRecords.current
        )
        out.gauge("offertrack_last_seq", help: "The highest seq acknowledged since start.", lastSeq.current)
        out.gauge("offertrack_journal_bytes", help: "The journal's size on disk, WAL included.", journalBytes)
        out.gauge(
            "offertrack_retention_seconds",
            help: "The rules file's retentionDays in seconds (0: raw records are kept forever).",
            retentionDays.current * 86_400)
        out.gauge(
            "offertrack_last_sealed_day_seconds",
            help: "00:00Z of the last sealed day (offertrack seal) in Unix seconds; 0 before the first seal.",
            sealed.map { $0.lastSealedDay * 86_400 } ?? 0)
        out.gauge(
            "offertrack_acceptance_horizon_seconds",
            help: "Records before this time are refused expired (their day is sealed), in Unix seconds; 0: none.",
            sealed.map { $0.horizon / 1000 } ?? 0)
        if let fleet { render(fleet, to: &out) }
        out.histogram("offertrack_commit_seconds", help: "Time to commit one batch.", commitSeconds)
        out.histogram(
            "offertrack_commit_statement_seconds",
            help: "Of each commit, its COMMIT alone: the batch's WAL frames written and synced.", commitStatementSeconds
        )
        out.histogram(
            "offertrack_writer_pause_seconds",
            help: "Each pause of the writer after a commit for a checkpoint (the WAL's limit, an erasure's frames).",
            writerPauseSeconds)
        out.histogram("offertrack_commit_records", help: "Records per committed batch.", commitRecords)
        out.counter(
            "offertrack_join_groups_total",
            help: "Returning users' groups of a batch by how the join took them: from the writer's summary alone, a "
                + "late check from the summary and one read, or refreshed (a short history read or index lookups).",
            label: "path",
            [
                ("summary", joinFromSummary.current), ("late_check", joinLateChecks.current),
                ("refreshed", joinRefreshed.current),
            ])
        out.histogram(
            "offertrack_commit_largest_user_records",
            help: "The most records of a single user in a committed batch (a hot user).", commitLargestUserRecords)
        out.histogram(
            "offertrack_ack_latency_seconds", help: "From a line read to its answer queued for the client.",
            ackLatency)
        return out.text
    }

    /// An edge's or a central daemon's stream metrics.
    private func render(_ fleet: FleetMetrics, to out: inout Exposition) {
        out.gauge(
            "offertrack_stream_up",
            help: "1 while the stream works for this daemon, 0 while it cannot forward or consume (see STATUS).",
            fleet.streamUp ? 1 : 0)
        if let forwardLag = fleet.forwardLag {
            out.gauge(
                "offertrack_forward_lag_records", help: "Records journaled and not yet acknowledged by the stream.",
                forwardLag)
        }
        if let consumeLag = fleet.consumeLag {
            out.gauge(
                "offertrack_consume_lag_records",
                help:
                    "Records of this journal's partitions not yet consumed (messages left times records per message).",
                consumeLag)
            out.counter(
                "offertrack_stream_invalid_total",
                help: "Lines of stream messages that are not valid records (dropped).",
                [("", UInt64(fleet.invalid))])
            out.counter(
                "offertrack_stream_conflicts_total",
                help: "Stream records whose id is journaled with other content (kept as journaled).",
                [("", UInt64(fleet.conflicts))])
            out.counter(
                "offertrack_stream_wrong_partition_total",
                help: "Stream records of a partition this journal does not hold (refused, never journaled).",
                [("", UInt64(fleet.wrongPartition))])
            out.counter(
                "offertrack_stream_expired_total",
                help: "Stream records before this journal's acceptance horizon (acknowledged, never journaled).",
                [("", UInt64(fleet.expired))])
        }
    }
}
