/// How big each measurement is: the full run, or `--smoke` (tiny, for CI).
struct BenchScale {
    /// Simulated records in the workload every section shares.
    let records: Int
    /// Batch sizes of the in-process `JournalWriter.append` baseline.
    let baselineBatches: [Int]
    /// Concurrent pipelining clients of the end-to-end runs.
    let clientCounts: [Int]
    /// Offered loads (records/s) of the latency runs, and how long each lasts.
    let latencyLoads: [Double]
    let latencySeconds: [Double]
    let latencyClients: Int
    /// Passes over the workload for the JSON costs.
    let jsonPasses: Int
    let idleConnections: Int
    /// Records in the journal `report` is timed on (besides `--big`'s).
    var queryRecords = 1_000_000
    /// Users simulated on the one busy day whose export is timed (about 0.15 commission rows each).
    var busyDayUsers = 700_000
    /// Export rows in the month whose payout statement is timed: a month of 10M records' exports (a busy day's
    /// 2.7M records gave 102,270 rows, so 10M give about 378,000; rounded up).
    var payoutMonthRows = 400_000
    /// Alternating with/without runs behind each join-cost ratio (the machine's speed drifts between runs).
    var pairs = 5
    /// The returning-user workload (`simulate --returning`): users, records, and how many latency runs.
    var returningUsers = 50_000
    var returningRecords = 300_000
    var returningLatencyRuns = 10
    /// Records the PostgreSQL peer commits (one transaction each: a few thousand a second).
    var peerRecords = 40_000
    /// The export-stall run (issue 22): 10,000 records/s over 8 clients for 25 s, the busy day's export 5 s in.
    var exportStall = ExportStall.Plan(recordsPerSecond: 10_000, clients: 8, leadSeconds: 5, totalSeconds: 25)
    /// The hot-user section (issue 31).
    var hot = HotUserScale.full
    /// The journal-size section.
    var journalSize = JournalSizeScale.full

    static let full = BenchScale(
        records: 200_000, baselineBatches: [1000, 8192], clientCounts: [1, 8, 64],
        latencyLoads: [1000, 10_000, 50_000], latencySeconds: [5, 3, 3], latencyClients: 8, jsonPasses: 1,
        idleConnections: 1000)

    static let smoke = BenchScale(
        records: 600, baselineBatches: [100], clientCounts: [1, 4],
        latencyLoads: [1000, 10_000], latencySeconds: [0.1, 0.02], latencyClients: 4, jsonPasses: 1,
        idleConnections: 100, queryRecords: 2000, busyDayUsers: 300, payoutMonthRows: 3000, pairs: 1,
        returningUsers: 300,
        returningRecords: 1_500, returningLatencyRuns: 2, peerRecords: 400,
        exportStall: ExportStall.Plan(recordsPerSecond: 2000, clients: 8, leadSeconds: 0.4, totalSeconds: 1.5),
        hot: .smoke, journalSize: .smoke)

    /// Records needed by the latency runs, one slice after another.
    var latencyRecords: [Int] {
        zip(latencyLoads, latencySeconds).map { max(latencyClients, Int($0 * $1)) }
    }
}
