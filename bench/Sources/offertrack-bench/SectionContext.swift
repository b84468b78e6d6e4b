import Foundation
import Posix
import TestSupport

/// What a section of the run needs from it: its scratch folder, daemons started on a database, fresh database
/// paths, and where its result rows and progress lines go.
struct SectionContext {
    let scratch: ScratchDirectory
    let launchDaemon: (_ label: String, _ databasePath: String, _ arguments: [String]) throws -> DaemonProcess
    let databasePath: () -> String
    let addRow: (ResultRow) -> Void
    let showProgress: (String) -> Void

    /// Starts `offertrackd` on `databasePath` with `arguments` (`label` names its files in the scratch folder).
    func startDaemon(_ label: String, _ databasePath: String, arguments: [String] = []) throws -> DaemonProcess {
        try launchDaemon(label, databasePath, arguments)
    }

    /// A path for a database no one has used yet.
    func newDatabase() -> String { databasePath() }

    /// Adds a row to the report (and shows it at once).
    func add(_ row: ResultRow) { addRow(row) }

    /// Shows a progress line on stderr.
    func progress(_ message: String) { showProgress(message) }

    /// Copies a stopped daemon's journal (and its WAL, if one is left) to `destination`.
    static func copyJournal(_ source: String, to destination: String) throws {
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: source + suffix) {
            try FileManager.default.copyItem(atPath: source + suffix, toPath: destination + suffix)
        }
    }

    /// What a daemon spent on a workload of returning records: its rate, and per record its CPU and bytes written
    /// and read.
    struct DaemonCost {
        let rate: Double
        let cpuMicroseconds: Double
        let writtenBytes: Double
        let readBytes: Double
    }

    /// Sends `workload` (`clients` interleaved pipelining clients) to a daemon started on a fresh copy of the stopped
    /// journal `template`, once it has learned every journaled user (not the measurement's work), and measures it.
    func timeOnACopy(
        of template: String, label: String, workload: Workload, clients: Int, learningSeconds: Double
    ) throws -> DaemonCost {
        let path = newDatabase()
        try Self.copyJournal(template, to: path)
        FileSystem.syncAll()
        let daemon = try startDaemon(label, path)
        _ = try daemon.waitForLog(containing: "the join knows every journaled user", timeoutSeconds: learningSeconds)
        let before = try ProcessIO.read(pid: daemon.pid)
        let measured = try IngestThroughput.measureWithCPU(
            workload, clients: clients, socketPath: daemon.socketPath, interleaved: true, pid: daemon.pid)
        let after = try ProcessIO.read(pid: daemon.pid)
        try daemon.stop()
        scratch.removeDatabase(path)
        guard let cpu = measured.cpuMicroseconds else { throw BenchFailure("cannot read the daemon's CPU time") }
        let count = Double(workload.count)
        return DaemonCost(
            rate: measured.rate, cpuMicroseconds: cpu,
            writtenBytes: Double(after.writtenBytes - before.writtenBytes) / count,
            readBytes: Double(after.readBytes - before.readBytes) / count)
    }
}
