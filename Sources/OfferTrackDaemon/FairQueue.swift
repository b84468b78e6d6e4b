/// The records waiting for the writer, one FIFO per connection, taken round-robin: a batch holds at most
/// `quantum` records of any one connection, so a client that pipelines thousands of lines cannot put a
/// well-behaved client's line behind all of them (head-of-line blocking), and the batch it lands in stays small.
struct FairQueue {
    /// One connection's jobs, oldest first, from `head` on.
    private struct Lane {
        var jobs: [CommitJob] = []
        var head = 0
        var isEmpty: Bool { head == jobs.count }
    }

    private var lanes: [UInt64: Lane] = [:]
    /// Connections with waiting jobs, in the order they are served next.
    private var ring: [UInt64] = []
    private var ringHead = 0
    /// Jobs waiting, over every connection.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }
    /// Connections with jobs waiting.
    var connectionCount: Int { lanes.count }
    /// Jobs held in memory, taken ones not yet dropped included (at most about twice `count`).
    var heldJobs: Int { lanes.values.reduce(0) { $0 + $1.jobs.count } }

    mutating func append(_ job: CommitJob) {
        if lanes[job.connection] == nil {
            lanes[job.connection] = Lane()
            ring.append(job.connection)
        }
        lanes[job.connection]?.jobs.append(job)
        count += 1
    }

    /// Takes up to `quantum` jobs from each connection in turn, in one pass over the connections that have
    /// some, at most `limit` in all; connections not reached in this batch come first in the next.
    /// A connection alone in the queue is not held to `quantum`: nobody waits behind it.
    mutating func takeBatch(limit: Int, quantum: Int) -> [CommitJob] {
        // Small enough that one pass reaches every connection: a newcomer's line goes into this batch.
        let quantum = lanes.count <= 1 ? limit : min(quantum, max(1, limit / lanes.count))
        var batch: [CommitJob] = []
        var visits = ring.count - ringHead
        while batch.count < limit && visits > 0 && ringHead < ring.count {
            visits -= 1
            let token = ring[ringHead]
            ringHead += 1
            guard var lane = lanes.removeValue(forKey: token) else { continue }
            let end = min(lane.jobs.count, lane.head + min(quantum, limit - batch.count))
            batch.append(contentsOf: lane.jobs[lane.head..<end])
            lane.head = end
            if lane.isEmpty {
                continue  // its next job makes a new lane
            }
            // Taken jobs are dropped once they are as many as those left (amortized O(1) a job): they hold
            // their records and lines, which no queue limit counts, so a floor of thousands a connection let
            // 64 pipelining clients keep ~100 MiB of committed records alive.
            if lane.head >= 32 && lane.head * 2 >= lane.jobs.count {
                lane.jobs.removeFirst(lane.head)
                lane.head = 0
            }
            lanes[token] = lane
            ring.append(token)
        }
        if ringHead > 1024 && ringHead * 2 > ring.count {
            ring.removeFirst(ringHead)
            ringHead = 0
        }
        count -= batch.count
        return batch
    }

    /// Takes every waiting job (the drain deadline passed).
    mutating func removeAll() -> [CommitJob] {
        var all: [CommitJob] = []
        for token in ring[ringHead...] {
            if let lane = lanes[token] { all.append(contentsOf: lane.jobs[lane.head...]) }
        }
        lanes.removeAll()
        ring.removeAll()
        ringHead = 0
        count = 0
        return all
    }
}
