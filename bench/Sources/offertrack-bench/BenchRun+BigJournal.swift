import Foundation
import OfferTrackDomain
import Posix
import SQLite
import TestSupport

/// A big journal: start-up (quick_check, READY=1), reports, reviews and users learned.
extension BenchRun {
    func measureBigJournal() throws {
        guard options.big else {
            add(
                ResultRow(
                    section: "4 Footprint", name: "process start → `READY=1`, 10M-record journal",
                    value: "not measured", comparison: "run with `--big`"))
            return
        }
        let count = options.bigRecords
        let path = newDatabase()
        progress("building a \(Format.grouped(Double(count)))-record journal")
        let seconds = try BigJournal.build(path: path, count: count) {
            self.progress("  \(Format.grouped(Double($0))) records")
        }
        let size = Double(Posix.CurrentProcess.fileSize(path) ?? 0) / 1_048_576
        // The journal was joined under the holding rules: the daemon gets them too, or it would recompute.
        let rulesPath = scratch.file("holding-rules.json")
        try QueryCost.writeHoldingRules(to: rulesPath)
        var readies: [Double] = []
        for attempt in 1...3 {
            let daemon = try startDaemon(
                label: "big-\(attempt)", databasePath: path, arguments: ["--rules", rulesPath])
            readies.append(daemon.readyMilliseconds)
            if attempt == 1 {
                add(try learnedUsersRow(daemon, records: count))
                add(quickCheckRow(daemon, records: count))
                add(try reviewRow(daemon, databasePath: path, records: count))
            }
            try daemon.stop()
        }
        let ready = readies.sorted()[readies.count / 2]
        let cli = options.resolvedCLIPath
        let reportRows = try QueryCost.reportRows(cli: cli, path: path, rulesPath: rulesPath, records: count)
        for row in reportRows { add(row) }
        reportOnBigJournal = try QueryCost.milliseconds(cli: cli, ["report", "--db", path, "--rules", rulesPath]).ms
        // Last, as it leaves the derived tables under other windows: SIGHUP with them recomputes every derived
        // table on the writer (issue 13).
        let reloading = try startDaemon(label: "big-reload", databasePath: path, arguments: ["--rules", rulesPath])
        try QueryCost.writeNarrowedRules(to: rulesPath)
        // A record every 100 ms during the reload, each of a user of its own (new to the journal).
        let reload = try reloading.reload(interval: 0.1) { index in
            Array(
                #"{"type":"capabilities","id":"reload-probe-\#(index)","ts":"2026-11-20T00:00:00Z","user":"u-probe-\#(index)","authorization":0}"#
                    .utf8)
        }
        try reloading.stop()
        try QueryCost.writeHoldingRules(to: rulesPath)
        let accepted = reload.answers.filter { $0.contains(#""status":"accepted""#) }.count
        let waits = reload.probeMilliseconds.sorted()
        add(
            ResultRow(
                section: "4 Footprint",
                name: "`SIGHUP` with other windows on a \(Format.grouped(Double(count)))-record journal → `READY=1`",
                value: "\(Format.fixed(reload.readyMilliseconds / 1000, 1)) s",
                comparison: "one record every 100 ms meanwhile: \(accepted) of \(waits.count) accepted, answered in "
                    + "median \(Format.fixed(waits[waits.count / 2], 1)) ms, p99 "
                    + "\(Format.fixed(waits[min(waits.count - 1, waits.count * 99 / 100)], 1)) ms, longest "
                    + "\(Format.fixed(waits.last ?? 0, 1)) ms"))
        readyOnBigJournal = ready
        add(
            ResultRow(
                section: "4 Footprint",
                name: "process start → `READY=1`, \(Format.grouped(Double(count)))-record journal",
                value: "\(Format.fixed(ready, 1)) ms",
                comparison: "median of 3 (\(readies.map { Format.fixed($0, 1) }.joined(separator: ", ")) ms); "
                    + "journal \(Format.fixed(size, 0)) MiB, built in \(Format.fixed(seconds, 0)) s, warm page cache"))
        scratch.removeDatabase(path)
    }

    /// `offertrack review` end to end on a big journal (issue 19: under 50 ms): finding the conversion's user by
    /// its id, connecting, sending one record and waiting for its durable commit; median of 5, each on another
    /// conversion.
    func reviewRow(_ daemon: DaemonProcess, databasePath: String, records: Int) throws -> ResultRow {
        let connection = try Connection(path: databasePath, mode: .readOnly)
        let statement = try connection.prepare(
            "SELECT id FROM records WHERE type = 2 AND subscribed = 1 AND seq > ?1 LIMIT 1")
        var times: [Double] = []
        for run in 0..<5 {
            try statement.bind(Int64(records / 6 * (run + 1)), at: 1)
            guard try statement.step(), let conversion = statement.text(0) else { break }
            statement.reset()
            let arguments = [
                "review", "--db", databasePath, "--socket", daemon.socketPath, "--conversion", conversion,
                "--decision", "hold", "--reason", "test",
            ]
            times.append(try QueryCost.milliseconds(cli: options.resolvedCLIPath, arguments, runs: 1).ms)
        }
        let sorted = times.sorted()
        return ResultRow(
            section: "4 Footprint",
            name:
                "`offertrack review` end to end (lookup + send + durable ack), \(Format.grouped(Double(records)))-record journal",
            value: sorted.isEmpty ? "no conversion found" : "\(Format.fixed(sorted[sorted.count / 2], 1)) ms",
            comparison: "median of \(sorted.count) (\(sorted.map { Format.fixed($0, 1) }.joined(separator: ", ")) ms); "
                + "target ≤ 50 ms; includes starting the CLI process")
    }

    /// How long the start's `PRAGMA quick_check` took, from the daemon's own log line (it runs before `READY=1`).
    func quickCheckRow(_ daemon: DaemonProcess, records: Int) -> ResultRow {
        let line = daemon.log.split(separator: "\n").first { $0.contains("quick_check of ") } ?? "not logged"
        let value = line.split(separator: " ").suffix(2).joined(separator: " ")
        return ResultRow(
            section: "4 Footprint",
            name: "`PRAGMA quick_check` at start, journal of \(Format.grouped(Double(records))) records",
            value: value, comparison: "part of process start → `READY=1`; warm page cache")
    }

    /// How long a restarted, idle daemon takes to learn which users the journal holds (until then the join
    /// probes the journal for every user of a batch), from its own log line.
    func learnedUsersRow(_ daemon: DaemonProcess, records: Int) throws -> ResultRow {
        let marker = "the join knows every journaled user: "
        let seenAfter = try daemon.waitForLog(containing: marker, timeoutSeconds: 600)
        let line = daemon.log.split(separator: "\n").first { $0.contains(marker) } ?? ""
        let detail = line.firstRange(of: marker).map { String(line[$0.upperBound...]) } ?? String(line)
        return ResultRow(
            section: "4 Footprint",
            name:
                "restart → the join knows every user, idle daemon, journal of \(Format.grouped(Double(records))) records",
            value: "\(Format.fixed(seenAfter, 0)) ms", comparison: "after the spawn; the daemon says: \(detail)")
    }
}
