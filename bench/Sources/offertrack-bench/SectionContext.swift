import Foundation
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
}
