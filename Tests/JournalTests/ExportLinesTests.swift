import Foundation
import OfferTrackDomain
import OutputFormats
import Publishing
import SQLite
import Simulator
import Testing

/// Schema 14: a published day's lines are stored as rows beside its CSV, staged in chunks with it, and read back as
/// the plan made them; a day published before has none (its CSV is read back instead).
@Suite struct ExportLinesTests {
    @Test func aPublishedDaysLinesReadBackAsPlannedAndWriteItsCSV() throws {
        let directory = "/tmp/export-lines-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = "\(directory)/journal.db"
        _ = try ExportFixtures.journal(at: path)
        // Chunks of 7 lines: the day's lines take many transactions. Other amounts the next day: every row of the
        // first is reversed and replaced (reversals, adjustments, original dates).
        var published: [ExportPlan.Line] = []
        for (index, rules) in [try ExportFixtures.rules(500, 700), try ExportFixtures.rules(450, 900)].enumerated() {
            let day = ExportFixtures.day(index)
            let fresh = try CommissionExporter.export(
                journalPath: path, day: day, rules: rules, now: ExportFixtures.later + Int64(index),
                limits: ExportFixtures.small)
            let lines = try #require(fresh.lines)
            #expect(!fresh.republished && ExportPlan.csv(of: lines) == fresh.csv)
            let again = try CommissionExporter.export(
                journalPath: path, day: day, rules: rules, now: ExportFixtures.later + 9, readingLines: true)
            #expect(again.republished && again.csv == fresh.csv)
            #expect(again.lines == lines, "\(day)'s lines read back otherwise")
            // Without asking, a republished day's lines are not read.
            let plain = try CommissionExporter.export(
                journalPath: path, day: day, rules: rules, now: ExportFixtures.later)
            #expect(plain.lines == nil)
            published += lines
        }
        #expect(published.contains { $0.isReversal } && published.contains { $0.kind == .adjustment && !$0.isReversal })
        #expect(published.count > 40, "\(published.count) lines")
        let connection = try Connection(path: path, mode: .readWrite)
        #expect(try connection.scalarInt("SELECT count(*) FROM export_lines") == Int64(published.count))
        #expect(try connection.scalarInt("SELECT sum(lines) FROM export_runs") == Int64(published.count))
        // A day published before schema 14 (its run names no lines) reads back without them.
        try connection.execute("UPDATE export_runs SET lines = NULL WHERE day = '\(ExportFixtures.day(0))'")
        let legacy = try CommissionExporter.export(
            journalPath: path, day: ExportFixtures.day(0), rules: try ExportFixtures.rules(500, 700),
            now: ExportFixtures.later,
            readingLines: true)
        #expect(legacy.republished && legacy.lines == nil)
        // The lines read back from its CSV write it again.
        #expect(ExportPlan.csv(of: try ExportPlan.lines(readingCSV: legacy.csv)) == legacy.csv)
        // A run that stores other than the lines it names is refused.
        try connection.execute("DELETE FROM export_lines WHERE line = 3 AND run = (SELECT max(run) FROM export_runs)")
        #expect(throws: (any Error).self) {
            try CommissionExporter.export(
                journalPath: path, day: ExportFixtures.day(1), rules: try ExportFixtures.rules(450, 900),
                now: ExportFixtures.later, readingLines: true)
        }
    }
}
