import Foundation
import SQLite
import Simulator
import TestSupport
import Testing

/// A daemon's journal to damage, and the means: garbage over its bytes, where a table's or an index's root page is.
enum JournalDamage {
    /// A journal of `count` records written by a daemon that then stopped cleanly (WAL checkpointed away).
    static func journal(in directory: ScratchDirectory, count: Int = 3000) throws -> String {
        let daemon = try DaemonProcess(in: directory)
        guard daemon.waitReady() else { throw JournalSafetyFailure("the daemon did not start") }
        let answers = try LineClient(path: daemon.socketPath).exchange(
            TestRecords.stream(prefix: "r", count: count))
        #expect(answers.count == count && answers.allSatisfy { $0.status == "accepted" })
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
        return daemon.databasePath
    }

    /// Overwrites `count` bytes at `offset` of `path` with pseudo-random garbage.
    static func overwrite(_ path: String, offset: UInt64, count: Int) throws {
        var generator = SeededGenerator(seed: 13)
        let garbage = Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: garbage)
        try handle.synchronize()
        try handle.close()
    }

    /// The page number of the root of `name` (a table or index).
    static func rootPage(of name: String, in path: String) throws -> Int64 {
        let connection = try Connection(path: path, mode: .readOnly)
        return try connection.scalarInt("SELECT rootpage FROM sqlite_master WHERE name = '\(name)'") ?? -1
    }
}

/// A daemon that did not get as far as a test needs (no `READY=1`).
struct JournalSafetyFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
