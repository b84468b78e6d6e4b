import Foundation
import OfferTrackDomain
import Posix
import TestSupport
import Testing

/// The export's files are written safely into `--out` (issue 12): no symlink is followed, no name is guessable.
@Suite struct ExportFileSafetyTests {
    /// A journal (made by a daemon, then stopped) and the example rules: enough to export an empty day.
    static func journal(in directory: ScratchDirectory) throws -> (db: String, rules: String) {
        let daemon = try DaemonProcess(in: directory)
        daemon.waitReady()
        daemon.signal(Signals.terminate)
        _ = daemon.waitExit()
        return (daemon.databasePath, Repository.file("systemd/rules.example.json"))
    }

    static var yesterday: String {
        Timestamp.formatDay(
            Clock.wallMilliseconds() / Timestamp.millisecondsPerDay * Timestamp.millisecondsPerDay
                - Timestamp.millisecondsPerDay)
    }

    /// Symlinks planted where the old temporary names were (`.NAME.<pid>.tmp` for the next pids) and at the final
    /// name point at a victim file: the victim is untouched and the exported files are regular files.
    @Test func plantedSymlinksAreNeitherFollowedNorKept() throws {
        let directory = ScratchDirectory()
        let (db, rules) = try Self.journal(in: directory)
        let out = directory.file("out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let victim = directory.file("victim")
        try Data("precious\n".utf8).write(to: URL(fileURLWithPath: victim))
        let day = Self.yesterday
        let names = ["commissions-\(day).csv", "commissions-\(day).manifest.json"]
        let lastPID =
            Int(
                (try? String(contentsOfFile: "/proc/sys/kernel/ns_last_pid", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        for pid in lastPID..<(lastPID + 400) {
            for name in names { symlink(victim, "\(out)/.\(name).\(pid).tmp") }
        }
        symlink(victim, "\(out)/\(names[0])")

        let outcome = try Shell.run(
            Binaries.cli, ["export", "--date", day, "--db", db, "--rules", rules, "--out", out])
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(
            try String(contentsOfFile: victim, encoding: .utf8) == "precious\n", "the export wrote through a symlink")
        for name in names {
            var info = stat()
            #expect(lstat("\(out)/\(name)", &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG, "\(name) is not a file")
        }
        let csv = try String(contentsOfFile: "\(out)/\(names[0])", encoding: .utf8)
        #expect(csv.hasPrefix("kind,conversion_id,"), "\(csv)")
    }

    /// An `--out` owned by another user (here `nobody`) is refused before anything is published (exit 73).
    @Test func anOutDirectoryOwnedByAnotherUserIsRefused() throws {
        let directory = ScratchDirectory()
        let (db, rules) = try Self.journal(in: directory)
        let out = directory.file("foreign")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try #require(chown(out, 65534, 65534) == 0, "cannot chown (not root?)")
        let outcome = try Shell.run(
            Binaries.cli, ["export", "--date", Self.yesterday, "--db", db, "--rules", rules, "--out", out])
        #expect(outcome.status == 73, "\(outcome.output)")
        #expect(outcome.output.contains("owned by uid 65534"), "\(outcome.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).isEmpty)
    }
}
