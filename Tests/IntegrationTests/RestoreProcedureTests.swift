import Foundation
import Posix
import TestSupport
import Testing

/// docs/backup-and-restore.md, "Restoring one host", run step by step with the commands the page gives (paths in a
/// scratch directory instead of /var/lib/offertrack, the daemon started and stopped directly instead of by systemd):
/// an erasure, reviews, records and published days and a payout month after the backup are all brought back as the
/// page says: the erasure sent again, the records resent in step with the publications since, whose CSVs published
/// again are the bytes finance already has (the manifests differ in generatedAt only), and the next day's export
/// carries what came after them as it would have without the restore.
@Suite(.serialized) struct RestoreProcedureTests {
    /// H = 48 h; every conversion earns 500.
    static let rules = #"{"currency":"USD","holdingPeriodHours":48,"rules":[{"affiliateToken":"*","amountMinor":500}]}"#

    /// `first` … `last` (UTC days, `YYYY-MM-DD`), in order.
    static func days(_ first: Int, through last: Int, of month: String) -> [String] {
        (first...last).map { "\(month)-\($0 < 10 ? "0" : "")\($0)" }
    }

    /// A conversion of `user` at 10:00 on October `day` (qualifies two days later).
    static func conversion(_ user: String, october day: Int) -> [String] {
        TestRecords.conversion(
            user, affiliate: "aff-\(day % 3)", campaign: nil, at: "2026-10-\(day < 10 ? "0" : "")\(day)T10:00:00Z")
    }

    /// A manifest's text without its `generatedAt` value.
    static func withoutGeneratedAt(_ manifest: String) -> String {
        manifest.replacingOccurrences(of: #""generatedAt":"[^"]*""#, with: "", options: .regularExpression)
    }

    @Test func restoringOneHostBringsBackErasuresRecordsAndPublications() throws {
        let directory = ScratchDirectory("ot-restore")
        let rules = directory.file("rules.json")
        try Self.rules.write(toFile: rules, atomically: true, encoding: .utf8)
        // /var/lib/offertrack-exports (what finance has) and /var/backups/offertrack.
        let exports = directory.file("exports")
        let backups = directory.file("backups")
        for path in [exports, backups] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        var daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules])
        guard daemon.waitReady() else { return }
        let db = daemon.databasePath
        let socket = ["--socket", daemon.socketPath]
        func publish(_ day: String, into out: String) throws -> Shell.Outcome {
            try CLI.run(["export", "--db", db, "--date", day, "--out", out, "--rules", rules])
        }

        // Before the backup: ten conversions and the person who will ask to be forgotten, October 1-15 published.
        let before =
            (0..<10).flatMap { Self.conversion("u-a\($0)", october: 1 + $0) } + Self.conversion("pat", october: 5)
        #expect(try LineClient(path: daemon.socketPath).exchange(before).allSatisfy { $0.status == "accepted" })
        for day in Self.days(1, through: 15, of: "2026-10") { #expect(try publish(day, into: exports).status == 0) }
        let backup = "\(backups)/offertrack-2026-10-16T004500Z.db"
        #expect(try CLI.run(["backup", "--db", db, "--to", backup]).status == 0)
        #expect(try CLI.run(["verify", "--db", backup]).status == 0)

        // After it, before the next nightly export: a relay's records (pat's among them), a review, an erasure. Then
        // October 16-31 and the month are published.
        let beforePublishing =
            (0..<10).flatMap { Self.conversion("u-b\($0)", october: 14 + $0) }
            + [TestRecords.capabilities(id: "pat-late", user: "pat", ts: "2026-10-20T09:00:00Z")]
        #expect(
            try LineClient(path: daemon.socketPath).exchange(beforePublishing).allSatisfy { $0.status == "accepted" })
        func voiding(_ conversion: String) -> [String] {
            ["review", "--db", db, "--conversion", conversion, "--decision", "void", "--reason", "refund"] + socket
        }
        #expect(try CLI.run(voiding("o-u-a3")).status == 0)
        let firstErasure = try CLI.run(["erase", "--user", "pat", "--ticket", "DSR-2041"] + socket)
        #expect(firstErasure.status == 0, "\(firstErasure.output)")
        let lateDays = Self.days(16, through: 31, of: "2026-10")
        for day in lateDays { #expect(try publish(day, into: exports).status == 0) }
        #expect(
            try CLI.run(["payouts", "--db", db, "--month", "2026-10", "--out", exports, "--rules", rules]).status == 0)
        let reversal = try String(contentsOfFile: "\(exports)/commissions-2026-10-16.csv", encoding: .utf8)
        #expect(reversal.contains("adjustment,o-u-a3,"), "the review's reversal: \(reversal)")
        // After the publications: a late conversion of a published day and a review of a conversion already paid
        // (both adjustments of the next day finance gets).
        let afterPublishing = Self.conversion("u-late", october: 20)
        #expect(
            try LineClient(path: daemon.socketPath).exchange(afterPublishing).allSatisfy { $0.status == "accepted" })
        #expect(try CLI.run(voiding("o-u-b0")).status == 0)

        // 1. Stop the daemon. 2. Move the journal aside with its -wal and -shm, put the backup in its place, start.
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
        let lib = directory.path
        let moved = try OperatorShell.run(
            "mkdir \(lib)/damaged && mv \(lib)/offertrack.db* \(lib)/damaged/ && "
                + "install -m 0640 \(backup) \(lib)/offertrack.db")
        #expect(moved.status == 0, "\(moved.output)")
        daemon.notify.reset()
        daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules], notify: daemon.notify)
        guard daemon.waitReady() else { return }
        defer { DaemonProcess.terminateCleanly([daemon]) }
        // The restored journal knows nothing after the backup: its last publications are the backup's.
        let restored = try CLI.output(["status", "--db", db, "--format", "json"] + socket)
        #expect(restored.contains(#""lastPublishedExport":"2026-10-15""#), "\(restored)")
        #expect(restored.contains(#""lastPublishedPayouts":null"#), "\(restored)")
        #expect(FileBytes.contain(db, #""user":"pat""#), "the backup holds pat's records under pat")

        // 3. The erasure sent again: a new name, not the first one.
        let erasure = try CLI.run(["erase", "--user", "pat", "--ticket", "DSR-2041"] + socket)
        #expect(erasure.status == 0, "\(erasure.output)")
        let name = erasure.output.split(separator: "\n").last.map(String.init) ?? ""
        #expect(name.hasPrefix("erased:") && name != firstErasure.output.split(separator: "\n").last.map(String.init))

        // 4. The relay sends again what it sent since the backup's time (a little before it too), with the same
        // ids, in the order of the publications since: first what it sent before they were published (the
        // manifests' generatedAt). What the journal holds is `duplicate`, pat's included (held under the new name).
        // The review of that time is decided again.
        let overlap = Self.conversion("u-a9", october: 10) + Self.conversion("pat", october: 5)
        func resend(_ lines: [String], _ name: String) throws -> Shell.Outcome {
            try lines.map { $0 + "\n" }.joined().write(toFile: directory.file(name), atomically: true, encoding: .utf8)
            return try CLI.run(["ingest", directory.file(name)] + socket)
        }
        let ingest = try resend(overlap + beforePublishing, "resend-1.ndjson")
        #expect(
            ingest.status == 0
                && ingest.output.contains(
                    "accepted \(beforePublishing.count)\nduplicate \(overlap.count)\nrejected 0\n"),
            "\(ingest.output)")
        #expect(try CLI.run(voiding("o-u-a3")).status == 0)

        // 5. Each day and month published since the backup, again, in order, into a scratch directory: the CSVs
        // are the bytes finance has; each manifest differs only in generatedAt (now, not then).
        let republish = directory.file("republish")
        try FileManager.default.createDirectory(atPath: republish, withIntermediateDirectories: true)
        func compare(_ name: String) throws {
            let cmp = try OperatorShell.run("cmp \(republish)/\(name).csv \(exports)/\(name).csv")
            #expect(cmp.status == 0, "\(name): \(cmp.output)")
            let manifests = try [republish, exports].map {
                try String(contentsOfFile: "\($0)/\(name).manifest.json", encoding: .utf8)
            }
            #expect(manifests[0] != manifests[1], "\(name): the same generatedAt")
            #expect(manifests.map(Self.withoutGeneratedAt).allSatisfy { $0 == Self.withoutGeneratedAt(manifests[0]) })
        }
        for day in lateDays {
            let run = try publish(day, into: republish)
            #expect(run.status == 0, "\(day): \(run.output)")
            try compare("commissions-\(day)")
        }
        let payouts = try CLI.run(["payouts", "--db", db, "--month", "2026-10", "--out", republish, "--rules", rules])
        #expect(payouts.status == 0, "\(payouts.output)")
        try compare("payouts-2026-10")
        // The journal records them as published again, and `status` shows them.
        let status = try CLI.output(["status", "--db", db, "--format", "json"] + socket)
        #expect(status.contains(#""lastPublishedExport":"2026-10-31""#), "\(status)")
        #expect(status.contains(#""lastPublishedPayouts":"2026-10""#), "\(status)")
        let text = try CLI.output(["status", "--db", db] + socket)
        #expect(text.contains("last published export: 2026-10-31\n"), "\(text)")
        #expect(text.contains("last published payouts: 2026-10\n"), "\(text)")

        // 4 again: what came after the last publication, and its review decided again. The nightly export goes on
        // from there: the next day carries them as adjustments, as it would have without the restore.
        let last = try resend(afterPublishing, "resend-2.ndjson")
        #expect(last.status == 0 && last.output.contains("accepted \(afterPublishing.count)\n"), "\(last.output)")
        #expect(try CLI.run(voiding("o-u-b0")).status == 0)
        #expect(try publish("2026-11-01", into: exports).status == 0)
        let next = try String(contentsOfFile: "\(exports)/commissions-2026-11-01.csv", encoding: .utf8)
        #expect(next.contains("adjustment,o-u-b0,") && next.contains("adjustment,o-u-late,"), "\(next)")

        // The forgotten person is forgotten again: no file of the journal holds pat within 60 s, and pat's
        // records (the one resent since included) answer to the new name only.
        #expect(
            eventually(60) { !FileBytes.contain(db, #""pat""#) && !FileBytes.contain(db + "-wal", #""pat""#) },
            "pat is still in the restored journal's files")
        #expect(try CLI.run(["explain", "--db", db, "--rules", rules, "--user", "pat"]).status == 66)
        let explained = try CLI.output(["explain", "--db", db, "--rules", rules, "--user", name, "--format", "json"])
        #expect(explained.contains(#""ticket":"DSR-2041""#), "\(explained)")

        // 6. A backup of the complete journal.
        let after6 = "\(backups)/offertrack-after-restore.db"
        #expect(try CLI.run(["backup", "--db", db, "--to", after6]).status == 0)
        let verify = try CLI.run(["verify", "--db", after6, "--rules", rules])
        #expect(verify.status == 0, "\(verify.output)")
    }
}
