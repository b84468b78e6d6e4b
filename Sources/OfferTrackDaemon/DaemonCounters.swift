/// What the daemon has answered since it started, for `STATUS=` and logs.
struct DaemonCounters: Equatable {
    var accepted = 0
    var duplicates = 0
    var rejected = 0
    var storageUnavailable = 0
    /// Times SQLite reported the journal corrupt while running.
    var corruptionsDetected = 0
    var lastSeq: Int64 = 0
    var connections = 0
}
